import json, sys
m = json.load(open('msgs.json'))
SPECIAL = {'Time','MicroTime','Quantity','IntOrString','Duration','RawExtension','FieldsV1'}
KEYS = sys.argv[4].split(',') if len(sys.argv) > 4 and sys.argv[4] else []
def simple(tn): return tn.rsplit('.', 1)[1]
def build(tn, stack=(), item=False):
    if tn in stack: return None
    obj = {}
    for f in m[tn]['fields']:
        if item and f['name'] in KEYS and 'tn' not in f:
            obj[f['name']] = {9: 'k', 5: 7, 3: 7, 8: True}[f['type']]
        if 'tn' not in f: continue
        t = f['tn']
        if simple(t) in SPECIAL or m[t]['map']: continue
        c = build(t, stack + (tn,), f['label'] == 3)
        if c is None: continue
        if (simple(tn), f['name']) in {('Probe','handler'),('Volume','volumeSource'),('EphemeralContainer','ephemeralContainerCommon')} or f['name']=='localObjectReference':
            obj.update(c); continue
        obj[f['name']] = [c] if f['label'] == 3 else c
    return obj
root = sys.argv[1]
o = build(root)
api, kind = sys.argv[2], simple(root)
o = dict(apiVersion=api, kind=kind, **o)
o['metadata']['name'] = sys.argv[3]
o['metadata']['namespace'] = 'default'
json.dump(o, sys.stdout)
