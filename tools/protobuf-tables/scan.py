import zlib, re, sys
data = open('/usr/bin/kubectl','rb').read()
found = []
for m in re.finditer(b'\x1f\x8b\x08\x00\x00\x00\x00\x00', data):
    i = m.start()
    try:
        d = zlib.decompressobj(16+zlib.MAX_WBITS)
        out = d.decompress(data[i:i+2000000])
    except Exception as e:
        continue
    if b'.proto' in out[:200]:
        name = out[2:2+out[1]] if out[0]==0x0a else out[:60]
        found.append((i, name, len(out)))
        open('desc_%d.bin'%len(found),'wb').write(out)
for f in found: print(f)
print(len(found))
