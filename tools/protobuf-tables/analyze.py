import json
m = json.load(open('msgs.json'))
SPECIAL = {'Time','MicroTime','Quantity','IntOrString','Duration','RawExtension','FieldsV1'}
INLINE = {('.k8s.io.api.core.v1.Probe','handler'), ('.k8s.io.api.core.v1.Volume','volumeSource'),
          ('.k8s.io.api.core.v1.EphemeralContainer','ephemeralContainerCommon')}
def is_inline(tn, f):
    return (tn, f['name']) in INLINE or f['name'] == 'localObjectReference'
def simple(tn): return tn.rsplit('.', 1)[1]
keep = set(); covered = set(); missing = set()
def zero(v): return v in ("", 0, False) and v is not None
def walk(tn, obj):
    covered.add(tn)
    for f in m[tn]['fields']:
        if 'tn' in f and is_inline(tn, f):
            if f['name'] in obj: missing.add((tn, f['name'], 'INLINE-NOT'))
            walk(f['tn'], obj); continue
        k = f['name']
        if 'tn' in f and (simple(f['tn']) in SPECIAL or m[f['tn']]['map']): continue
        if 'tn' in f:
            if k not in obj: missing.add((tn, k)); continue
            v = obj[k]
            for it in (v if isinstance(v, list) else [v]):
                if isinstance(it, dict): walk(f['tn'], it)
        elif f['label'] != 3 and k in obj and zero(obj[k]) and not (isinstance(obj[k], bool) and obj[k] is True):
            keep.add((tn, k))
def top(fn, tn, items=False):
    o = json.load(open(fn))
    for it in (o['items'] if items else [o]): walk(tn, it)
top('outA_job.json', '.k8s.io.api.batch.v1.Job')
top('outB_job.json', '.k8s.io.api.batch.v1.Job')
top('outB_pod.json', '.k8s.io.api.core.v1.Pod')
top('outB_cronjob.json', '.k8s.io.api.batch.v1.CronJob')
top('out_event.json', '.k8s.io.api.core.v1.Event', True)
top('out_node.json', '.k8s.io.api.core.v1.Node')
print('missing', sorted(missing))
json.dump(dict(keep=sorted(keep), covered=sorted(covered)), open('keep.json','w'), indent=0)
print(len(keep), len(covered))
for k in sorted(keep): print(' ', simple(k[0]), k[1])
