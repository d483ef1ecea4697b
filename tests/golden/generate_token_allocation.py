#!/usr/bin/env python3
"""Independent reference generator for keyplace's token allocation (token_allocation.hpp).

Written from Cassandra's Java sources (ReplicationAwareTokenAllocator, NoReplicationTokenAllocator,
TokenAllocatorBase, TokenAllocation.createStrategy, Murmur3Partitioner) and keyplace's documented
choices (SplitMix64 seeded with seed XOR fmix64(tokens + 1), ties broken by token value, units in
id order), not from the C++ sources, so that the vectors it prints check the C++ independently.
It keeps Java's queue discipline (remove, re-score, re-add) and its order of summation.

Usage, from the repository root:
    /usr/bin/python3 tests/golden/generate_token_allocation.py > tests/golden/token_allocation_v1.txt

Needs only the Python 3 standard library.
"""
import heapq
import math
import sys
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 100
M64=(1<<64)-1
def fmix64(k):
    k^=k>>33; k=(k*0xff51afd7ed558ccd)&M64; k^=k>>33; k=(k*0xc4ceb9fe1a85ec53)&M64; k^=k>>33; return k
class SM:
    def __init__(s,st): s.s=st&M64
    def next(s):
        s.s=(s.s+0x9e3779b97f4a7c15)&M64; z=s.s
        z=((z^(z>>30))*0xbf58476d1ce4e5b9)&M64; z=((z^(z>>27))*0x94d049bb133111eb)&M64; return z^(z>>31)
    def unit(s): return (s.next()>>11)*2.0**-53
# The arithmetic in use: native (unsigned 64-bit, exact binary ratio, floor) or murmur3 (Java's
# LongToken and Murmur3Partitioner: signed, decimal ratio, truncation toward zero).
ARITH = 'native'
LMIN = -2**63
LMAX = 2**63 - 1
def signed(v):
    v &= M64
    return v - (1 << 64) if v >= 1 << 63 else v
def size(l,r):
    if ARITH == 'murmur3':
        d = math.ldexp(float(signed(r - l)), -64)
        return d if d > 0.0 else d + 1.0
    d=(r-l)&M64
    return 1.0 if d==0 else float(d)*2.0**-64
def midpoint(l,r):
    if ARITH == 'murmur3':
        if l < r:
            return (l + r) >> 1
        m = (LMAX - LMIN + l + r) >> 1
        return LMIN + (m - LMAX) if m > LMAX else m
    d=(r-l)&M64
    if d==0: d=1<<64
    return (l+d//2)&M64
def split(l,r,ratio):
    if ARITH == 'murmur3':
        rd = Decimal(repr(ratio))  # BigDecimal.valueOf: Double.toString, the shortest decimal
        if l < r:
            return signed(int(Decimal(r - l) * rd + Decimal(l)))
        t = int(Decimal(LMAX - LMIN + r - l) * rd + Decimal(l))  # int() truncates toward zero
        return t if t <= LMAX else signed(LMIN + (t - LMAX))
    d=(r-l)&M64
    if d==0: d=1<<64
    return (l+math.floor(d*Fraction(ratio)))&M64
def from_random(bits):
    if ARITH == 'murmur3':
        v = signed(bits)
        return LMAX if v == LMIN else v
    return bits
MINR=1.0-1.0/math.sqrt(5.0)
MAXR=MINR+0.075

def generate_splits(tokens, count, g, out):
    tokens=sorted(tokens)
    if not tokens and count>0:
        t=from_random(g.next()); tokens.append(t); out.append(t); count-=1
    while count>0:
        prev=tokens[-1]; maxsz=0; t1=t2=None
        for cur in tokens:
            sz=size(prev,cur)
            if sz>maxsz: maxsz=sz; t1=prev; t2=cur
            prev=cur
        t=split(t1,t2,MINR+(MAXR-MINR)*g.unit())
        out.append(t); tokens.append(t); tokens.sort(); count-=1

class Tok:
    __slots__=('token','unit','start','thr','own','prev','next')
class Cand:
    __slots__=('token','unit','start','thr','own','split','prev','next','removed')

def ra_allocate(tokens, owners, groups, rf, count, g):
    # tokens sorted; owners unit index; groups per unit (last = new unit)
    newu=len(groups)-1
    units_with=set(owners)
    grp_with=set(groups[u] for u in units_with)
    out=[]
    if len(units_with)<rf or count>len(tokens) or len(grp_with)<rf:
        generate_splits(tokens,count,g,out); return sorted(out)
    n=len(tokens)
    opt=rf/(n+count)
    own=[0.0]*len(groups); tc=[0]*len(groups)
    for o in owners: tc[o]+=1
    own[newu]=count*opt; tc[newu]=count
    ng=groups[newu]
    toks=[]
    for i in range(n):
        t=Tok(); t.token=tokens[i]; t.unit=owners[i]; t.own=0.0; toks.append(t)
    for i in range(n):
        toks[i].prev=toks[i-1]; toks[i].next=toks[(i+1)%n]
    def populate(prevtok, token, unit):
        tg=groups[unit]; seen=set(); thr=token; start=token; cg=None
        cur=prevtok
        while True:
            start=cur.token; cg=groups[cur.unit]
            if cg in seen:
                cur=cur.prev; continue
            seen.add(cg)
            if len(seen)>=rf: break
            thr=start
            if cg==tg: break
            cur=cur.prev
        if ng==tg: thr=token
        elif ng!=cg and ng in seen: thr=start
        return start,thr
    def pop_adj(t):
        t.start,t.thr=populate(t.prev,t.token,t.unit)
        no=size(t.start,t.token); own[t.unit]+=no-t.own; t.own=no
    for t in toks: pop_adj(t)
    cands=[]
    for t in toks:
        m=midpoint(t.prev.token,t.token)
        if m==t.prev.token or m==t.token: continue
        c=Cand(); c.token=m; c.unit=newu; c.own=opt; c.split=t; c.removed=False; cands.append(c)
    k=len(cands)
    for i,c in enumerate(cands):
        c.prev=cands[i-1]; c.next=cands[(i+1)%k]
    def pop_cand(c): c.start,c.thr=populate(c.split.prev,c.token,c.unit)
    for c in cands: pop_cand(c)
    def further(t1,t2,tw):
        if t1==tw: return t2
        if t2==tw: return t1
        return t1 if size(t1,tw)>size(t2,tw) else t2
    def evaluate(c, mult):
        adj={}
        order=[]
        def add(u,diff):
            if u not in adj: adj[u]=own[u]+diff; order.append(u)
            else: adj[u]+=diff
        def apply(oldo,newo,u):
            add(u,newo-oldo)
            return ((newo-opt)**2-(oldo-opt)**2)/(tc[u]**2)
        ch=apply(c.own,size(c.start,c.token),c.unit)
        seen=set(); cur=c.split
        while len(seen)<rf:
            gg=groups[cur.unit]
            if gg not in seen:
                seen.add(gg)
                st=further(cur.thr,c.token,cur.token)
                ch+=apply(cur.own,size(st,cur.token),cur.unit)
            cur=cur.next
        uc=0.0
        # Java sums along the chain from the last added back to the new unit; order matters for floats
        for u in reversed(order):
            d=(adj[u]/tc[u]-opt)**2-(own[u]/tc[u]-opt)**2
            uc+= d*mult if u==newu else d
        return -(ch+uc)
    heap=[]
    for idx,c in enumerate(cands):
        heapq.heappush(heap,(-evaluate(c,1.0/count),c.token,idx))
    def confirm(c):
        prev=c.split.prev
        t=Tok(); t.token=c.token; t.unit=c.unit; t.own=c.own
        t.prev=prev; t.next=c.split; prev.next=t; c.split.prev=t
        pop_adj(t)
        seen=set(); cand=c; cur=t.next
        while len(seen)<rf:
            cand=cand.next; pop_cand(cand)
            gg=groups[cur.unit]
            if gg not in seen:
                seen.add(gg); pop_adj(cur)
            cur=cur.next
    w,tk,idx=heapq.heappop(heap); best=cands[idx]
    vn=1
    while True:
        c=best
        c.next.prev=c.prev; c.prev.next=c.next
        confirm(c); out.append(c.token)
        if vn==count: break
        while True:
            if not heap: raise Exception('empty')
            w,tk,idx=heapq.heappop(heap); best=cands[idx]
            impr=evaluate(best,(vn+1.0)/count)
            if not heap or impr>=-heap[0][0]: break
            heapq.heappush(heap,(-impr,best.token,idx))
        vn+=1
    return sorted(out)

def nr_allocate(tokens, owners, nunits, count, g):
    out=[]
    units=set(owners)
    if not units or count>len(tokens):
        s=set(tokens)
        while len(out)<count:
            t=from_random(g.next())
            if t not in s: s.add(t); out.append(t)
        return sorted(out)
    n=len(tokens)
    toks=[]
    for i in range(n):
        t=Tok(); t.token=tokens[i]; t.unit=owners[i]; toks.append(t)
    for i in range(n): toks[i].prev=toks[i-1]
    own=[0.0]*nunits
    for t in toks:
        t.own=size(t.prev.token,t.token); own[t.unit]+=t.own
    vheap={u:[] for u in range(nunits)}
    for t in toks: heapq.heappush(vheap[t.unit],(-t.own,t.token,id(t),t))
    uheap=[(-own[u],u) for u in units]; heapq.heapify(uheap)
    target=0.0; s=0.0; chosen=[]
    for i in range(count):
        if not uheap: break
        w,u=uheap[0]; w=-w
        s+=w; avg=s/(len(chosen)+2)
        if w<=avg: break
        heapq.heappop(uheap); chosen.append((w,u)); target=avg
    missed=0
    for nr,(w,u) in enumerate(chosen):
        want=count//len(chosen)+(1 if nr<count%len(chosen) else 0)
        take=min(want,len(vheap[u])); missed+=want-take
        taken=[]; work=0.0
        for i in range(take):
            x=heapq.heappop(vheap[u]); taken.append(x[3]); work+=x[3].own; own[u]-=x[3].own
        tto=w-target
        for t in taken:
            sl=0.9
            if tto<work: sl=min(max(tto/work,1.0-0.9),0.9)  # MIN_TAKEOVER_RATIO = 1.0 - 0.90 in double
            before=t.prev.token
            f=split(before,t.token,sl)
            if f==before or f==t.token: missed+=1
            else:
                nt=Tok(); nt.token=f; nt.unit=-1; nt.prev=t.prev; nt.own=size(before,f); t.prev=nt
                t.own=size(f,t.token); out.append(f)
            own[u]+=t.own
            heapq.heappush(vheap[u],(-t.own,t.token,id(t),t))
    if missed:
        allt=sorted(tokens+out)
        generate_splits(allt,missed,g,out)
    return sorted(out)

def allocate(members, newid, newgroup_key, rf, count, seed, group_by):
    # members: list of (id, groupkey, tokens). units in id order.
    ms=sorted([m for m in members if m[2]], key=lambda m:m[0])
    entries=sorted((t,u) for u,m in enumerate(ms) for t in m[2])
    tokens=[e[0] for e in entries]; owners=[e[1] for e in entries]
    if group_by:
        gid={}
        groups=[gid.setdefault(m[1],len(gid)) for m in ms]+[gid.setdefault(newgroup_key,len(gid))]
    else:
        groups=list(range(len(ms)+1))
    g=SM(seed^fmix64(len(tokens)+1))
    if rf<=1: return nr_allocate(tokens,owners,len(ms)+1,count,g)
    return ra_allocate(tokens,owners,groups,rf,count,g)

def scenario(nodes, vnodes, rf, racks, seed, members):
    """Grows `nodes` nodes n0, n1, ... (rack i % racks when racks > 0) onto `members`."""
    for i in range(nodes):
        nid="n%d"%i; rk=("r%d"%(i%racks)) if racks else ""
        # TokenAllocation.createStrategy: racks are counted only when the new node's rack is known
        group_by=False
        if racks and rf>1:
            known=set(m[1] for m in members if m[2])
            cnt=len(known) if rk in known else 1
            if cnt==rf:
                ring=[m for m in members if m[1]==rk]; toks=allocate(ring,nid,rk,1,vnodes,seed,False)
                members.append((nid,rk,toks)); continue
            elif cnt>rf: group_by=True
            elif cnt==1: group_by=False
            else: raise Exception('unsupported')
        toks=allocate(members,nid,rk,rf,vnodes,seed,group_by)
        members.append((nid,rk,toks))
    return members

# (arithmetic, nodes, tokens per node, rf, racks, seed). murmur3 cases start from a node "s" on
# rack r0 holding token 0 (a Cassandra ring is never empty) and use SimpleStrategy (racks 0) or
# NetworkTopologyStrategy in one datacenter (racks > 0).
CASES = [
    ('native', 30, 4, 1, 0, 1),
    ('native', 24, 16, 1, 0, 7),
    ('native', 30, 4, 2, 0, 1),
    ('native', 20, 1, 3, 0, 3),
    ('native', 25, 16, 3, 0, 5),
    ('native', 40, 4, 3, 6, 1),
    ('native', 30, 8, 2, 4, 2),
    ('native', 12, 4, 3, 3, 4),
    ('murmur3', 20, 8, 3, 0, 11),
    ('murmur3', 24, 4, 3, 6, 12),
]

def main():
    global ARITH
    out = []
    for arith, nodes, vnodes, rf, racks, seed in CASES:
        ARITH = arith
        start = [('s', 'r0' if racks else '', [0])] if arith == 'murmur3' else []
        out.append('case %s %d %d %d %d %d' % (arith, nodes, vnodes, rf, racks, seed))
        for m in scenario(nodes, vnodes, rf, racks, seed, start):
            if m[0] != 's':
                out.append(m[0] + ' ' + ' '.join(map(str, m[2])))
    sys.stdout.buffer.write(('\n'.join(out) + '\n').encode())

if __name__=='__main__':
    main()
