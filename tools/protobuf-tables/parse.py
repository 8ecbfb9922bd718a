import sys, glob, json
def varint(b, i):
    r = 0; s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def fields(b):
    i = 0; out = []
    while i < len(b):
        k, i = varint(b, i); f, w = k >> 3, k & 7
        if w == 0: v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i); v = b[i:i+n]; i += n
        elif w == 1: v = b[i:i+8]; i += 8
        elif w == 5: v = b[i:i+4]; i += 4
        else: raise Exception('wt %d' % w)
        out.append((f, v))
    return out
def msg(b, prefix):
    d = dict(name=None, fields=[], nested=[], opts=None)
    for f, v in fields(b):
        if f == 1: d['name'] = prefix + v.decode()
        elif f == 2:
            fd = {}
            for ff, vv in fields(v):
                if ff == 1: fd['name'] = vv.decode()
                elif ff == 3: fd['num'] = vv
                elif ff == 4: fd['label'] = vv
                elif ff == 5: fd['type'] = vv
                elif ff == 6: fd['tn'] = vv.decode()
                elif ff == 8: fd['opts'] = fields(vv)
                elif ff == 10: fd['json'] = vv.decode()
            d['fields'].append(fd)
        elif f == 3: d['nested'].append(v)
        elif f == 7: d['opts'] = fields(v)
    d['nested'] = [msg(n, d['name'] + '.') for n in d['nested']]
    return d
allm = {}
for fn in glob.glob('desc_*.bin'):
    b = open(fn,'rb').read()
    pkg = None; ms = []
    for f, v in fields(b):
        if f == 2: pkg = v.decode()
        if f == 4: ms.append(v)
    def add(m):
        allm[m['name']] = m
        for n in m['nested']: add(n)
    for m in ms: add(msg(m, '.' + pkg + '.'))
json.dump({k: dict(fields=v['fields'], map=bool(v['opts'])) for k, v in allm.items()}, open('msgs.json','w'), default=str, indent=0)
print(len(allm))
