// The golden corpus answered through the WebAssembly module (tests/golden/three_runtimes.py runs
// it beside the C++ and Python runners); prints what bindings/golden_runner.cpp prints.
// usage: node golden_runner.mjs WASM_DIR CORPUS.jsonl
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [dir, corpus] = process.argv.slice(2);
const { load, KeyplaceError } = await import(pathToFileURL(path.join(dir, 'keyplace.mjs')).href);
const kp = await load();

const bytes = (hex) => {
  const b = new Uint8Array(hex.length / 2);
  for (let i = 0; i < b.length; ++i) b[i] = parseInt(hex.substr(2 * i, 2), 16);
  return b;
};

const chunks = [];
const flush = () => {
  if (chunks.length) process.stdout.write(chunks.join(''));
  chunks.length = 0;
};
for await (const line of createInterface({ input: createReadStream(corpus), crlfDelay: Infinity })) {
  const c = JSON.parse(line);  // documents are JSON text: their 64-bit integers stay exact
  if (c.kind !== 'placement' && c.kind !== 'digest') continue;
  const head = `${c.source} ${c.case} `;
  let s;
  try {
    s = kp.snapshot(c.document);
  } catch (e) {
    if (!(e instanceof KeyplaceError)) throw e;
    chunks.push(`${head}error ${e.code} ${e.message}\n`);
    continue;
  }
  if (c.kind === 'digest') {
    chunks.push(`${head}digest ${s.fingerprint} ${s.probe}\n`);
    chunks.push(`${head}report ownership ${s._s.ownershipJson()}\n`);
  } else {
    for (const q of c.queries) {
      if ('key' in q) {
        const key = bytes(q.key);
        let text = `${head}key ${q.key} ${s.owner(key)}`;
        if ('copies' in q) text += ' ' + s.copies(key).join(',');
        chunks.push(text + '\n');
      } else {
        const point = BigInt(q.point);
        let text = `${head}point ${q.point} ${s.ownerAt(point)}`;
        if ('copies' in q) text += ' ' + s.copiesAt(point).join(',');
        chunks.push(text + '\n');
      }
    }
  }
  s.free();
  if (chunks.length > 4096) flush();
}
flush();
