'use strict';
/*
 * The ONNX Runtime side of `make bench` (driven by tools/bench/bench.py; the
 * graphcc twin is graphcc-worker.c, with the same protocol). ONNX Runtime is
 * the npm package onnxruntime-node, a benchmark peer only.
 *
 *   node ort-worker.js ORT_MODULE_DIR MODEL.onnx THREADS NAME=FILE.npy...
 *       Makes one InferenceSession (intraOpNumThreads=THREADS,
 *       interOpNumThreads=1, sequential, graph optimization 'all'), reads
 *       the inputs once, prints "ready <prepare ms> <ORT version>" and
 *       serves one request per line of stdin:
 *         run K     runs K times; replies "ok <ms per run>", measured with
 *                   process.hrtime (monotonic) around the K runs
 *         dump DIR  writes output i of the last run as DIR/<i>.npy; "ok"
 *         quit      exits 0
 *       A failure prints "error <message>" and exits 1.
 *   node ort-worker.js ORT_MODULE_DIR --baseline
 *       Loads onnxruntime-node but makes no session (the RSS floor of the
 *       Node process); prints "ready 0 <ORT version> <mapped>" and waits for
 *       "quit". <mapped> says whether libonnxruntime is in the process.
 */
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
  '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array],
};

/* A NumPy .npy file (versions 1-3, C order, the types above) as an ort.Tensor. */
function readNpy(ort, file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY')
    throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + hlen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header) || !DTYPES[descr[1]])
    throw new Error(`${file}: unsupported .npy header ${header.trim()}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [type, Arr] = DTYPES[descr[1]];
  const n = dims.reduce((a, b) => a * b, 1);
  if (start + n * Arr.BYTES_PER_ELEMENT > buf.length) throw new Error(`${file}: truncated`);
  const data = new Arr(buf.buffer.slice(buf.byteOffset + start,
    buf.byteOffset + start + n * Arr.BYTES_PER_ELEMENT));
  return new ort.Tensor(type, type === 'bool' ? Uint8Array.from(data) : data, dims);
}

function writeNpy(file, t) {
  const descr = Object.keys(DTYPES).find((k) => DTYPES[k][0] === t.type);
  if (!descr) throw new Error(`output of type ${t.type}: cannot write it as .npy`);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  h += ' '.repeat(63 - ((10 + h.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(h.length, 8);
  const d = t.data;
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(h, 'latin1'),
    Buffer.from(d.buffer, d.byteOffset, d.byteLength)]));
}

async function main() {
  const [ortDir, model, threads, ...inputs] = process.argv.slice(2);
  const ort = require(path.resolve(ortDir, 'onnxruntime-node'));
  const version = require(path.resolve(ortDir, 'onnxruntime-node', 'package.json')).version;
  const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  if (model === '--baseline') {
    const mapped = fs.readFileSync('/proc/self/maps', 'utf8').includes('libonnxruntime');
    console.log(`ready 0 ${version} ${mapped ? 'mapped' : 'not-mapped'}`);
    while (!(await lines.next()).done);
    return;
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const arg of inputs) {
    const eq = arg.indexOf('=');
    feeds[arg.slice(0, eq)] = readNpy(ort, arg.slice(eq + 1));
  }
  const prepareMs = Number(process.hrtime.bigint() - t0) / 1e6;
  let last = await session.run(feeds);
  console.log(`ready ${prepareMs.toFixed(3)} ${version}`);
  for (;;) {
    const { value: line, done } = await lines.next();
    if (done || line === 'quit') break;
    if (line.startsWith('run ')) {
      const k = Number(line.slice(4));
      if (!(k >= 1)) throw new Error(`bad request '${line}'`);
      const start = process.hrtime.bigint();
      for (let i = 0; i < k; i++) last = await session.run(feeds);
      console.log(`ok ${(Number(process.hrtime.bigint() - start) / 1e6 / k).toFixed(6)}`);
    } else if (line.startsWith('dump ')) {
      session.outputNames.forEach((name, i) =>
        writeNpy(path.join(line.slice(5), `${i}.npy`), last[name]));
      console.log('ok');
    } else {
      throw new Error(`bad request '${line}'`);
    }
  }
}

main().then(() => process.exit(0), (e) => {
  console.log(`error ${String(e && e.message ? e.message : e).replace(/\n/g, ' ')}`);
  process.exit(1);
});
