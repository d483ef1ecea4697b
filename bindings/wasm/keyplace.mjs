// keyplace in JavaScript: the C++ library's snapshot layer compiled to WebAssembly
// (keyplace_wasm.mjs and keyplace_wasm.wasm, beside this file), wrapped in plain objects. A key
// is placed by the library's own code, so it lands where a C++ service or the Python module
// places it. Works in a browser (served over http) and in Node (18 or later).
//
//   import { load } from './keyplace.mjs';
//   const kp = await load();
//   const s = kp.snapshot({format: 'keyplace.snapshot/1', cluster: 'c', epoch: 1,
//                          strategy: {name: 'ring', contract: 1}, nodes: [{id: 'a'}, {id: 'b'}]});
//   s.owner('user:42');

/** A refusal from the library: code (its number), reason (the code's meaning), message (naming
 *  the offending value) and where (the document field, or ""). */
export class KeyplaceError extends Error {
  constructor({ code, reason, message, where }) {
    super(message);
    this.name = 'KeyplaceError';
    this.code = code;
    this.reason = reason;
    this.where = where;
  }
}

// A module function's result, or its refusal thrown.
function checked(r) {
  if (r !== null && typeof r === 'object' && 'error' in r && Object.keys(r).length === 1) {
    throw new KeyplaceError(r.error);
  }
  return r;
}

// A key as the module takes it: a Uint8Array as it is, a string as UTF-8. A string with a lone
// surrogate has no UTF-8 (embind's encoder would join it to the next character, another key):
// refused, as Python refuses such a str.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function keyOf(key, index) {
  if (key instanceof Uint8Array) return key;
  if (typeof key !== 'string') {
    throw new TypeError(`a key is a string or a Uint8Array${index === undefined ? '' : ` (key ${index})`}, not ${typeof key}`);
  }
  if (LONE_SURROGATE.test(key)) {
    throw new TypeError(`key ${index === undefined ? '' : `${index} `}has a lone surrogate, which UTF-8 cannot encode`);
  }
  return key;
}

// A count the module takes (an array's length, a number of copies).
function countOf(n, what) {
  if (!Number.isInteger(n) || n < 0 || n > 2 ** 26) {
    throw new RangeError(`${what} ${n} is not a whole number from 0 to 2^26`);
  }
  return n;
}

/** A built snapshot. Call free() when done with it: it holds memory of the module. */
export class Snapshot {
  constructor(native) {
    this._s = native;
    this._doc = null;
  }
  /** The canonical document (every parameter filled in, both digests), parsed. Integers above
   *  2^53 (tokens, points) lose precision in JSON.parse: read them from toJson() if you need them. */
  get document() {
    if (this._doc === null) this._doc = JSON.parse(this._s.document());
    return this._doc;
  }
  get nodes() { return this.document.nodes; }
  get fingerprint() { return this._s.fingerprint(); }
  get probe() { return this._s.probe(); }
  get inTransition() { return this._s.inTransition(); }
  toJson() { return this._s.document(); }
  /** The owner now (an override first). key: a string (its UTF-8 bytes) or a Uint8Array. */
  owner(key) { return this._s.owner(keyOf(key)); }
  ownerIndex(key) { return this._s.ownerIndex(keyOf(key)); }
  /** The key's replicas now, owner first: the snapshot's replication, or the owner alone. */
  copies(key) { return this._s.copies(keyOf(key)); }
  /** The first n distinct nodes of the key's preference order. */
  locateN(key, n) { return checked(this._s.locateN(keyOf(key), countOf(n, 'n'))); }
  writeSet(key) { return this._s.writeSet(keyOf(key)); }
  /** The key's 64-bit point (a BigInt). */
  pointOf(key) { return BigInt.asUintN(64, this._s.pointOf(keyOf(key))); }  // embind 3.1.6 returns uint64 signed
  ownerAt(point) { return checked(this._s.ownerAt(BigInt(point))); }
  copiesAt(point) { return checked(this._s.copiesAt(BigInt(point))); }
  /** Each key's owner as an index into nodes (a Uint32Array). */
  locateMany(keys) { return checked(this._s.locateMany(Array.from(keys, (k, i) => keyOf(k, i)))); }
  /** The owners (indices) at n evenly spaced points of the strategy's hash space: a table's
   *  residues (i * M / n), a ring's points of their width (i * 2^bits / n), by default 64-bit. */
  ownersAt(n) { return checked(this._s.ownersAcross(countOf(n, 'n'))); }
  /** ownersAt's space: {modulus: M, bits} for a table's M residues (modulus 0: points of
   *  that many bits). */
  pictureSpace() { return this._s.pictureSpace(); }
  /** Where the key falls in ownersAt's picture, in [0, 1); -1 where keys are placed by their bytes. */
  positionOf(key) { return this._s.positionOf(keyOf(key)); }
  ownership() { return JSON.parse(this._s.ownershipJson()); }
  coownership() { return JSON.parse(this._s.coownershipJson()); }
  free() {
    if (this._s !== null) this._s.delete();
    this._s = null;
  }
}

class Keyplace {
  constructor(m) {
    this._m = m;
    this.version = m.version();
  }
  /** The strategy table: one object per strategy a snapshot can hold. */
  strategies() { return JSON.parse(this._m.strategiesJson()); }
  /** A snapshot from its document: an object, or its JSON text. Throws KeyplaceError. */
  snapshot(doc) {
    const text = typeof doc === 'string' ? doc : JSON.stringify(doc);
    return new Snapshot(checked(this._m.load(text)));
  }
  /** What moves between two snapshots' current placements, beside the least it must. */
  movement(a, b) { return JSON.parse(checked(this._m.movementJson(a._s, b._s))); }
  /** The transfer plan from a to b. */
  plan(a, b) { return JSON.parse(checked(this._m.planJson(a._s, b._s))); }
}

/** Instantiates the module; options go to emscripten's factory (wasmBinary, locateFile). */
export async function load(options = {}) {
  const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null;
  if (isNode && typeof globalThis.require === 'undefined') {
    // emscripten 3.1.6's ES module reads the .wasm in Node through require('fs') and __dirname,
    // which an ES module does not have: provide both.
    const { createRequire } = await import('node:module');
    const { fileURLToPath } = await import('node:url');
    const path = await import('node:path');
    globalThis.require = createRequire(import.meta.url);
    globalThis.__dirname = path.dirname(fileURLToPath(import.meta.url));
  }
  if (isNode && options.wasmBinary === undefined) {
    // Node's fetch does not read file: URLs, which the module would try first: read it here.
    const { readFile } = await import('node:fs/promises');
    options = { ...options, wasmBinary: await readFile(new URL('./keyplace_wasm.wasm', import.meta.url)) };
  }
  const { default: createKeyplace } = await import('./keyplace_wasm.mjs');
  return new Keyplace(await createKeyplace(options));
}
