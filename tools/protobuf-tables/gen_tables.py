#!/usr/bin/env python3
"""Writes src/api/protobuf/internal/tables_*.cc and tables.h.

Inputs (see README.md in this folder for how they are produced):
  msgs.json  message descriptors as kubectl v1.32 embeds them (field numbers,
             types, gogoproto nullable) -- parse.py
  keep.json  fields whose Go JSON tag has no `omitempty` (learnt by letting
             kubectl re-marshal probe objects) -- analyze.py
Usage: gen_tables.py msgs.json keep.json OUTDIR
"""
import json, sys

ROOTS = [  # (apiVersion, kind, message)
    ('v1', 'Namespace', '.k8s.io.api.core.v1.Namespace'),
    ('v1', 'Pod', '.k8s.io.api.core.v1.Pod'),
    ('v1', 'Node', '.k8s.io.api.core.v1.Node'),
    ('v1', 'Event', '.k8s.io.api.core.v1.Event'),
    ('v1', 'Binding', '.k8s.io.api.core.v1.Binding'),
    ('v1', 'Service', '.k8s.io.api.core.v1.Service'),
    ('batch/v1', 'Job', '.k8s.io.api.batch.v1.Job'),
    ('batch/v1', 'CronJob', '.k8s.io.api.batch.v1.CronJob'),
    ('coordination.k8s.io/v1', 'Lease', '.k8s.io.api.coordination.v1.Lease'),
    ('meta.k8s.io/v1', 'DeleteOptions', '.k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'),
    ('v1', 'DeleteOptions', '.k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'),
    ('batch/v1', 'DeleteOptions', '.k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'),
    ('coordination.k8s.io/v1', 'DeleteOptions',
     '.k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'),
    ('policy/v1', 'DeleteOptions', '.k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'),
    ('policy/v1', 'Eviction', '.k8s.io.api.policy.v1.Eviction'),
    ('v1', 'ServiceAccount', '.k8s.io.api.core.v1.ServiceAccount'),
    ('authentication.k8s.io/v1', 'TokenRequest', '.k8s.io.api.authentication.v1.TokenRequest'),
    ('authentication.k8s.io/v1', 'SelfSubjectReview',
     '.k8s.io.api.authentication.v1.SelfSubjectReview'),
    ('authorization.k8s.io/v1', 'SelfSubjectAccessReview',
     '.k8s.io.api.authorization.v1.SelfSubjectAccessReview'),
    ('authorization.k8s.io/v1', 'SelfSubjectRulesReview',
     '.k8s.io.api.authorization.v1.SelfSubjectRulesReview'),
    ('authorization.k8s.io/v1', 'SubjectAccessReview',
     '.k8s.io.api.authorization.v1.SubjectAccessReview'),
    ('authorization.k8s.io/v1', 'LocalSubjectAccessReview',
     '.k8s.io.api.authorization.v1.LocalSubjectAccessReview'),
    ('rbac.authorization.k8s.io/v1', 'Role', '.k8s.io.api.rbac.v1.Role'),
    ('rbac.authorization.k8s.io/v1', 'ClusterRole', '.k8s.io.api.rbac.v1.ClusterRole'),
    ('rbac.authorization.k8s.io/v1', 'RoleBinding', '.k8s.io.api.rbac.v1.RoleBinding'),
    ('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', '.k8s.io.api.rbac.v1.ClusterRoleBinding'),
]
META = '.k8s.io.apimachinery.pkg.apis.meta.v1.'
SPECIAL = {
    META + 'Time': 'kTime', META + 'MicroTime': 'kMicroTime', META + 'Duration': 'kDuration',
    META + 'FieldsV1': 'kFieldsV1',
    '.k8s.io.apimachinery.pkg.api.resource.Quantity': 'kQuantity',
    '.k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'kIntOrString',
    '.k8s.io.apimachinery.pkg.runtime.RawExtension': 'kRawExtension',
}
# Types kubectl cannot re-marshal for us (no typed printing path): from their Go JSON tags.
MANUAL_KEEP = {('.k8s.io.api.core.v1.NamespaceCondition', 'type'),
               ('.k8s.io.api.core.v1.NamespaceCondition', 'status'),
               # Service (`kubectl create service`), from core/v1 and meta/v1 types.go.
               ('.k8s.io.api.core.v1.ServicePort', 'port'),
               ('.k8s.io.api.core.v1.PortStatus', 'port'),
               ('.k8s.io.api.core.v1.PortStatus', 'protocol'),
               (META + 'Condition', 'type'), (META + 'Condition', 'status'),
               (META + 'Condition', 'lastTransitionTime'), (META + 'Condition', 'reason'),
               (META + 'Condition', 'message')}

SCALAR = {9: 'kString', 12: 'kBytes', 8: 'kBool', 5: 'kInt32', 3: 'kInt64'}
PREFIX = {'.k8s.io.api.core.v1.': 'CoreV1', '.k8s.io.api.batch.v1.': 'BatchV1',
          '.k8s.io.api.coordination.v1.': 'CoordinationV1', '.k8s.io.api.policy.v1.': 'PolicyV1',
          '.k8s.io.api.authentication.v1.': 'AuthenticationV1',
          '.k8s.io.api.authorization.v1.': 'AuthorizationV1', '.k8s.io.api.rbac.v1.': 'RbacV1',
          META: 'MetaV1'}
# Go embeds these structs with `json:",inline"`: their fields sit in the parent object.
INLINE = {('.k8s.io.api.core.v1.Probe', 'handler'), ('.k8s.io.api.core.v1.Volume', 'volumeSource'),
          ('.k8s.io.api.core.v1.EphemeralContainer', 'ephemeralContainerCommon')}

# Go JSON names that differ from the proto field name.
JSON_NAMES = {('.k8s.io.api.authentication.v1.BoundObjectReference', 'uID'): 'uid'}

def ident(tn):
    for p, short in PREFIX.items():
        if tn.startswith(p):
            return 'k' + short + tn[len(p):].replace('.', '_')
    raise SystemExit('no prefix for ' + tn)

def main():
    msgs = json.load(open(sys.argv[1]))
    keep = {tuple(k) for k in json.load(open(sys.argv[2]))['keep']} | MANUAL_KEEP
    out = sys.argv[3]
    seen, order, stack = set(), [], [r[2] for r in ROOTS]
    while stack:
        tn = stack.pop()
        if tn in seen or tn in SPECIAL:
            continue
        seen.add(tn)
        order.append(tn)
        stack.extend(f['tn'] for f in msgs[tn]['fields'] if 'tn' in f)
    order.sort()
    files = {'tables_core_a.cc': [], 'tables_core_b.cc': [], 'tables_other.cc': []}
    core = [t for t in order if t.startswith('.k8s.io.api.core.v1.')]
    half = core[len(core) // 2]
    for tn in order:
        if not tn.startswith('.k8s.io.api.core.v1.'):
            files['tables_other.cc'].append(tn)
        elif tn < half:
            files['tables_core_a.cc'].append(tn)
        else:
            files['tables_core_b.cc'].append(tn)
    for name, tns in files.items():
        with open(f'{out}/{name}', 'w') as fh:
            fh.write(HEADER + '#include "api/protobuf/internal/tables.h"\n\n'
                     'namespace batchd::api::protobuf::internal {\n')
            for tn in tns:
                fh.write(emit(tn, msgs, keep))
            if name == 'tables_other.cc':
                fh.write('\nconst KindDesc kKinds[] = {\n')
                for api, kind, tn in ROOTS:
                    fh.write(f'    {{"{api}", "{kind}", &{ident(tn)}}},\n')
                fh.write('};\nconst size_t kNumKinds = sizeof(kKinds) / sizeof(kKinds[0]);\n')
            fh.write('\n}  // namespace batchd::api::protobuf::internal\n')
    with open(f'{out}/tables.h', 'w') as fh:
        fh.write(HEADER_H)
        for tn in order:
            fh.write(f'extern const MessageDesc {ident(tn)};\n')
        fh.write('\n}  // namespace batchd::api::protobuf::internal\n')

def emit(tn, msgs, keep):
    m = msgs[tn]
    rows = []
    for f in sorted(m['fields'], key=lambda f: f['num']):
        nullable = not any(o[0] == 65001 and o[1] == 0 for o in f.get('opts', []))
        flags = []
        if f['label'] == 3:
            flags.append('kRepeated')
        sub = 'nullptr'
        if 'tn' in f and f['tn'] in SPECIAL:
            ftype = SPECIAL[f['tn']]
        elif 'tn' in f and msgs[f['tn']]['map']:
            ftype, sub = 'kMap', '&' + ident(f['tn'])
            flags = []
        elif 'tn' in f:
            ftype, sub = 'kMessage', '&' + ident(f['tn'])
            if (tn, f['name']) in INLINE or f['name'] == 'localObjectReference':
                flags.append('kInline')
        else:
            ftype = SCALAR[f['type']]
        if m['map']:
            flags.append('kKeepZero')  # a map value is never omitted
        elif nullable and f['label'] != 3:
            flags.append('kPointer')
        if (tn, f['name']) in keep:
            flags.append('kKeepZero')
        fl = ' | '.join(flags) or '0'
        jname = JSON_NAMES.get((tn, f['name']), f['name'])
        rows.append(f'    {{{f["num"]}, "{jname}", FieldType::{ftype}, {fl}, {sub}}},\n')
    short = tn.rsplit('.', 1)[1] if not m['map'] else tn.rsplit('.', 2)[1] + '.' + tn.rsplit('.', 1)[1]
    i = ident(tn)
    return (f'\nconst FieldDesc {i}_fields[] = {{\n' + ''.join(rows) + '};\n'
            f'const MessageDesc {i} = {{"{short}", {i}_fields, {len(rows)}}};\n')

HEADER = '''// GENERATED by tools/protobuf-tables/gen_tables.py from the message
// descriptors kubectl v1.32 embeds. Do not edit by hand; regenerate.
'''
HEADER_H = HEADER + '''//
// Every message descriptor the decoder knows, and the kinds it decodes.
// Immutable constants: safe from any thread.
#pragma once

#include "api/protobuf/internal/descriptor.h"

namespace batchd::api::protobuf::internal {

'''

main()
