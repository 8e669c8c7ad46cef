// Run ONNX models in onnxruntime-web (WebAssembly) under Node, for the portability matrix:
//   node run_node.mjs REQUESTS.json RESULTS.json
// REQUESTS: [{"model": path, "feeds": {name: {type, dims, data: base64}}, "options": session options}, ...]
// RESULTS: one per request: {"outputs": [{name, type, dims, data}, ...]} or {"error": text,
// "stage": "load" | "run"}. One session per model, one run each, in order.
import { readFileSync, writeFileSync } from "node:fs";
import * as ort from "onnxruntime-web";

ort.env.wasm.numThreads = 1;
const ARRAYS = {
  float64: Float64Array, float32: Float32Array, int64: BigInt64Array, int32: Int32Array, int16: Int16Array,
  int8: Int8Array, uint64: BigUint64Array, uint32: Uint32Array, uint16: Uint16Array, uint8: Uint8Array, bool: Uint8Array,
};

function tensor({ type, dims, data }) {
  const bytes = Buffer.from(data, "base64");
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new ort.Tensor(type, new ARRAYS[type](copy.buffer), dims);
}

function packed(name, t) {
  const data = t.data instanceof Array ? Uint8Array.from(t.data.map(Number)) : t.data;
  return { name, type: t.type, dims: t.dims, data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64") };
}

const requests = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = [];
for (const request of requests) {
  let session;
  try {
    session = await ort.InferenceSession.create(request.model, { executionProviders: ["wasm"], ...(request.options || {}) });
  } catch (error) {
    results.push({ error: String(error), stage: "load" });
    continue;
  }
  try {
    const feeds = Object.fromEntries(Object.entries(request.feeds).map(([name, t]) => [name, tensor(t)]));
    const out = await session.run(feeds);
    results.push({ outputs: session.outputNames.map((name) => packed(name, out[name])) });
  } catch (error) {
    results.push({ error: String(error), stage: "run" });
  }
  await session.release();
}
writeFileSync(process.argv[3], JSON.stringify(results));
