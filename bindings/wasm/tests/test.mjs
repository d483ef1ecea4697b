// The WebAssembly module under Node: node --test bindings/wasm/tests/test.mjs, with
// KEYPLACE_WASM_DIR the directory the build writes it to (build/gcc/wasm).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dir = process.env.KEYPLACE_WASM_DIR;
assert.ok(dir, 'set KEYPLACE_WASM_DIR to the directory holding keyplace.mjs');
const { load, KeyplaceError } = await import(pathToFileURL(path.join(dir, 'keyplace.mjs')).href);
const kp = await load();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const doc = (strategy, nodes, extra = {}) => ({
  format: 'keyplace.snapshot/1', cluster: 'js', epoch: 1,
  strategy: { name: strategy, contract: 1, params: extra.params ?? {} },
  replication: { count: extra.copies ?? 0, spread: extra.spread ?? 'node' },
  nodes: nodes.map((n) => (typeof n === 'string' ? { id: n } : n)),
});

// A case of the golden digest table (an independent Python reference's values).
function golden(name) {
  const line = readFileSync(path.join(root, 'tests/golden/snapshot_digests_v2.txt'), 'utf8')
    .split('\n').find((l) => l.startsWith(`case ${name} `));
  return Object.fromEntries(line.split(' ').slice(2).map((f) => f.split(/=(.*)/s).slice(0, 2)));
}

test('digests equal the independent reference', () => {
  for (const name of ['ring_default', 'rendezvous_replicas3', 'jump_ten']) {
    const g = golden(name);
    const s = kp.snapshot(doc(g.strategy, g.nodes.split(','), { copies: Number(g.replication.split('/')[0]) }));
    assert.equal(s.fingerprint, g.fingerprint, name);
    assert.equal(s.probe, g.probe, name);
    assert.equal(kp.snapshot(s.toJson()).fingerprint, g.fingerprint);  // the canonical text reads back
    s.free();
  }
});

test('points are unsigned 64-bit BigInts', () => {
  // ring_native_v1.txt and multiprobe_native_v1.txt: XXH3-64 of "" and of "a".
  const s = kp.snapshot(doc('ring', ['a', 'b', 'c']));
  assert.equal(s.pointOf(''), 3244421341483603138n);
  assert.equal(s.pointOf('a'), 16629034431890738719n);  // above 2^63
  assert.equal(s.pointOf(new Uint8Array([0x61])), 16629034431890738719n);
  assert.equal(s.ownerAt(16629034431890738719n), s.owner('a'));
  assert.throws(() => s.ownerAt(-1n));
  assert.throws(() => s.ownerAt(1n << 64n));
  s.free();
});

test('batches, pictures and copies agree with single lookups', () => {
  const nodes = Array.from({ length: 9 }, (_, i) => ({ id: `n${i}`, zone: `z${i % 3}`, region: 'eu' }));
  const s = kp.snapshot(doc('ring', nodes, { copies: 3, spread: 'zone' }));
  const keys = Array.from({ length: 20000 }, (_, i) => `user:${i}`).concat(['', 'ключ', 'a\u0000b']);
  const got = s.locateMany(keys);
  assert.equal(got.length, keys.length);
  keys.forEach((k, i) => assert.equal(s.nodes[got[i]].id, s.owner(k)));
  const n = 1024;
  const across = s.ownersAt(n);
  for (let i = 0; i < n; i += 37) {
    assert.equal(s.nodes[across[i]].id, s.ownerAt((BigInt(i) << 64n) / BigInt(n)));
  }
  const zone = Object.fromEntries(nodes.map((x) => [x.id, x.zone]));
  for (let i = 0; i < 2000; ++i) {
    const c = s.copies(`k${i}`);
    assert.equal(c.length, 3);
    assert.equal(c[0], s.owner(`k${i}`));
    assert.equal(new Set(c.map((x) => zone[x])).size, 3);
    assert.deepEqual(s.copiesAt(s.pointOf(`k${i}`)), c);
  }
  s.free();
});

test('pictures span each strategy\'s own hash space', () => {
  // ketama's continuum is 32-bit and Redis places by 16,384 slots: sampling 64-bit points there
  // would give every arc one owner.
  for (const [strategy, space] of [['ketama', 1n << 32n], ['redis', 16384n], ['ring', 1n << 64n],
                                   ['maglev', 65537n]]) {
    const s = kp.snapshot(doc(strategy, ['10.0.0.1:11211', '10.0.0.2:11211', '10.0.0.3:11211']));
    const n = 512;
    const across = s.ownersAt(n);
    assert.equal(new Set(across).size, 3, strategy);
    for (let i = 0; i < n; i += 17) {
      assert.equal(s.nodes[across[i]].id, s.ownerAt((BigInt(i) * space) / BigInt(n)), strategy);
    }
    const { modulus, bits } = s.pictureSpace();
    assert.equal(modulus ? BigInt(modulus) : 1n << BigInt(bits), space, strategy);
    const f = s.positionOf('user:42');
    assert.ok(f >= 0 && f < 1, strategy);
    const p = s.pointOf('user:42');
    const expected = Number(modulus ? p % BigInt(modulus) : p) / Number(space);
    assert.ok(Math.abs(f - expected) < 1e-12, `${strategy}: ${f} vs ${expected}`);
    s.free();
  }
});

test('locateN is the preference order, refused where there is none', () => {
  const s = kp.snapshot(doc('rendezvous', Array.from({ length: 8 }, (_, i) => `n${i}`)));
  for (let i = 0; i < 300; ++i) {
    const five = s.locateN(`k${i}`, 5);
    assert.equal(new Set(five).size, 5);
    assert.deepEqual(s.locateN(`k${i}`, 3), five.slice(0, 3));
  }
  const jump = kp.snapshot(doc('jump', ['a', 'b', 'c']));
  assert.throws(() => jump.locateN('k', 2), (e) => e instanceof KeyplaceError && /no preference order/.test(e.message));
});

test('a join moves only to the joiner, as much as it must', () => {
  const a = kp.snapshot(doc('ring', ['n0', 'n1', 'n2', 'n3', 'n4']));
  const b = kp.snapshot(doc('ring', ['n0', 'n1', 'n2', 'n3', 'n4', 'n5']));
  const m = kp.movement(a, b);
  assert.equal(m.exact, true);
  const share = Object.fromEntries(b.ownership().nodes.map((x) => [x.id, x.share]));
  assert.ok(Math.abs(m.moved - share.n5) < 1e-12);
  assert.ok(Math.abs(m.moved - m.minimum) < 1e-12);
  const plan = kp.plan(a, b);
  assert.ok(plan.totals.length > 0 && plan.totals.every((t) => t.to === 'n5'));
});

test('bad documents are refused by name', () => {
  const cases = [
    ['{', 29, /invalid JSON at byte 2/],
    [doc('maglev', ['a'], { params: { 'table-size': 100 } }), 10, /table size 100 is not a prime/],
    [doc('ring', ['a'], { params: { vnodes: 0 } }), 5, /vnodes 0 is outside 1\.\.268435456/],
    [doc('rings', ['a']), 30, /strategy "rings" is not one of|'rings'/],
    [doc('ring', ['a', 'a']), 3, /node id 'a' is also the id of nodes\[0\]/],
    [doc('ring', ['a'], { copies: 2 }), 21, /replica count 2 is more than the 1 nodes/],
  ];
  for (const [bad, code, words] of cases) {
    assert.throws(() => kp.snapshot(bad), (e) => {
      assert.ok(e instanceof KeyplaceError);
      assert.equal(e.code, code, e.message);
      assert.match(e.message, words);
      assert.ok(e.reason.length > 0);
      return true;
    });
  }
});

test('bad arguments are refused before they reach the module', () => {
  const s = kp.snapshot(doc('ring', ['a', 'b']));
  // A lone surrogate has no UTF-8; embind would have joined it to the next character.
  assert.throws(() => s.owner('\uD800x'), /lone surrogate/);
  assert.throws(() => s.locateMany(['ok', '\uDC00']), /key 1 has a lone surrogate/);
  assert.equal(s.owner('\uD83D\uDE00'), s.owner(new Uint8Array([0xf0, 0x9f, 0x98, 0x80])));  // a pair is one character
  assert.throws(() => s.owner(42), TypeError);
  assert.throws(() => s.ownersAt(-1), RangeError);
  assert.throws(() => s.locateN('k', -1), RangeError);
  assert.throws(() => s.locateN('k', 1.5), RangeError);
  // go-mpchash places a key by its bytes: a point has no owner there.
  const m = kp.snapshot(doc('mpchash', ['a', 'b', 'c']));
  assert.throws(() => m.ownerAt(5n), (e) => e instanceof KeyplaceError && /places a key by its bytes/.test(e.message));
  assert.throws(() => m.copiesAt(5n), KeyplaceError);
  s.free();
  m.free();
});

test('the strategy table', () => {
  const rows = kp.strategies();
  const ring = rows.find((r) => r.name === 'ring');
  assert.equal(ring.params.find((p) => p.name === 'vnodes').default, 160);
  assert.ok(rows.length >= 20);
  assert.match(kp.version, /^\d+\.\d+\.\d+$/);
});

test('the bundle is at most 500 KB gzipped', () => {
  let total = 0;
  for (const f of ['keyplace.mjs', 'keyplace_wasm.mjs', 'keyplace_wasm.wasm']) {
    total += gzipSync(readFileSync(path.join(dir, f)), { level: 9 }).length;
  }
  console.log(`bundle: ${total} bytes gzipped`);
  assert.ok(total <= 500 * 1024, `${total} bytes`);
});
