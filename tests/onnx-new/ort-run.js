'use strict';
/*
 * ONNX Runtime (onnxruntime-node) as the cross-check of tests/onnx-new/generate.py.
 * Not used by `make test`: only the generator runs it, once, when cases change.
 *
 *   node ort-run.js ORT_MODULE_DIR JOBS.json
 *
 * JOBS.json is a list of {"model": PATH, "inputs": [{"name", "type", "dims",
 * "file"}], "outdir": DIR}. Tensor data is raw little-endian bytes in "file"
 * (a JSON list of strings for type "string"). For each job, one line of JSON
 * on stdout, in order: {"outputs": [{"name", "type", "dims", "file"}]} with
 * the outputs written to DIR/<i>.bin (strings: DIR/<i>.json), or
 * {"error": MESSAGE} when ONNX Runtime refuses the model or the inputs.
 */
const fs = require('fs');
const path = require('path');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array, float16: Uint16Array,
};

function tensorOf(ort, inp) {
  if (inp.type === 'string')
    return new ort.Tensor('string', JSON.parse(fs.readFileSync(inp.file, 'utf8')), inp.dims);
  const Arr = ARRAYS[inp.type];
  if (!Arr) throw new Error(`input ${inp.name}: type ${inp.type} has no ort.Tensor form`);
  const buf = fs.readFileSync(inp.file);
  const copy = new Uint8Array(buf.length);
  copy.set(buf);
  return new ort.Tensor(inp.type, new Arr(copy.buffer, 0, buf.length / Arr.BYTES_PER_ELEMENT),
    inp.dims);
}

function writeOutput(dir, i, name, t) {
  if (t.type === 'string') {
    const file = path.join(dir, `${i}.json`);
    fs.writeFileSync(file, JSON.stringify(Array.from(t.data)));
    return { name, type: t.type, dims: t.dims, file };
  }
  if (!ARRAYS[t.type]) throw new Error(`output ${name}: type ${t.type} cannot be written`);
  const file = path.join(dir, `${i}.bin`);
  const d = t.data;
  fs.writeFileSync(file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
  return { name, type: t.type, dims: t.dims, file };
}

async function runJob(ort, job) {
  const session = await ort.InferenceSession.create(job.model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'disabled', logSeverityLevel: 4,
  });
  const feeds = {};
  for (const inp of job.inputs) feeds[inp.name] = tensorOf(ort, inp);
  const results = await session.run(feeds);
  fs.mkdirSync(job.outdir, { recursive: true });
  const outputs = session.outputNames.map((n, i) => writeOutput(job.outdir, i, n, results[n]));
  if (session.release) await session.release();
  return { outputs };
}

async function main() {
  if (process.argv.length !== 4) {
    process.stderr.write('usage: node ort-run.js ORT_MODULE_DIR JOBS.json\n');
    process.exit(2);
  }
  const ort = require(path.resolve(process.argv[2], 'onnxruntime-node'));
  const jobs = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
  for (const job of jobs) {
    let line;
    try {
      line = await runJob(ort, job);
    } catch (e) {
      line = { error: String(e && e.message ? e.message : e).split('\n')[0] };
    }
    process.stdout.write(JSON.stringify(line) + '\n');
  }
}

main().catch((e) => { process.stderr.write(`ort-run: ${e.stack || e}\n`); process.exit(1); });
