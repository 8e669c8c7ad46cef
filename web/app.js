// The page's script: loads ptonnx's two models into onnxruntime-web and draws what they give.
// `window.ptonnx` is what the headless-Chromium test (tests/pymc/test_browser.py) calls: the
// same runs as the page's, with the inputs and outputs as raw bytes (base64), so no number is
// rounded on its way back.
"use strict";

ort.env.wasm.wasmPaths = new URL("node_modules/onnxruntime-web/dist/", location.href).href;
ort.env.wasm.numThreads = 1;

const GRID = Array.from({ length: 61 }, (_, i) => -3 + 0.1 * i);
const LOW = 0.05, HIGH = 0.95;

function bytesToBase64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}
function base64ToBytes(text) {
  const raw = atob(text), bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}
const packed = (t) => ({ dims: t.dims, type: t.type, data: bytesToBase64(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)) });

async function load(name) {
  const meta = await (await fetch(`models/${name}.json`)).json();
  const session = await ort.InferenceSession.create(`models/${name}.onnx`, { executionProviders: ["wasm"] });
  return { meta, session };
}

// obs draws (rows x xs.length, float64) at the points xs under the key [k0, k1]
async function predictive(model, xs, key) {
  const { meta, session } = model, feeds = {};
  for (const name of meta.inputs) {
    if (name === "key") feeds[name] = new ort.Tensor("uint32", Uint32Array.from(key), [2]);
    else if (name === "x") feeds[name] = new ort.Tensor("float64", Float64Array.from(xs), [xs.length]);
    else feeds[name] = new ort.Tensor("float64", Float64Array.from(meta.rows[name]), [meta.rows[name].length]);
  }
  const out = await session.run(feeds);
  return out[meta.outputs[0]];
}

function quantile(sorted, q) {
  const at = q * (sorted.length - 1), i = Math.floor(at), f = at - i;
  return i + 1 < sorted.length ? sorted[i] * (1 - f) + sorted[i + 1] * f : sorted[i];
}

function bands(obs, n) {
  const [rows] = obs.dims, out = [];
  for (let j = 0; j < n; j++) {
    const column = new Float64Array(rows);
    for (let r = 0; r < rows; r++) column[r] = obs.data[r * n + j];
    column.sort();
    out.push([quantile(column, LOW), quantile(column, 0.5), quantile(column, HIGH)]);
  }
  return out;
}

function drawPlot(meta, grid, band, x, at) {
  const canvas = document.getElementById("plot"), g = canvas.getContext("2d");
  const W = canvas.width, H = canvas.height, ys = band.flat().concat(meta.observed.y);
  const lo = Math.min(...ys), hi = Math.max(...ys);
  const px = (v) => 40 + (v + 3) / 6 * (W - 60), py = (v) => H - 30 - (v - lo) / (hi - lo) * (H - 50);
  g.clearRect(0, 0, W, H);
  g.fillStyle = "rgba(70, 130, 200, 0.25)";
  g.beginPath();
  grid.forEach((v, i) => g.lineTo(px(v), py(band[i][2])));
  [...grid].reverse().forEach((v, i) => g.lineTo(px(v), py(band[grid.length - 1 - i][0])));
  g.fill();
  g.strokeStyle = "rgb(40, 90, 160)"; g.beginPath();
  grid.forEach((v, i) => g.lineTo(px(v), py(band[i][1])));
  g.stroke();
  g.fillStyle = "#222";
  meta.observed.x.forEach((v, i) => { g.beginPath(); g.arc(px(v), py(meta.observed.y[i]), 2.5, 0, 7); g.fill(); });
  g.strokeStyle = "rgb(200, 60, 40)"; g.lineWidth = 2; g.beginPath();
  g.moveTo(px(x), py(at[0])); g.lineTo(px(x), py(at[2])); g.stroke(); g.lineWidth = 1;
  g.fillStyle = "#555"; g.font = "12px sans-serif";
  g.fillText(`band: ${LOW * 100}%-${HIGH * 100}% of the posterior predictive, ${meta.rows[Object.keys(meta.rows)[0]].length} posterior rows`, 50, 16);
}

async function redraw(model) {
  const x = Number(document.getElementById("x").value), k = Number(document.getElementById("key").value);
  document.getElementById("xval").textContent = x.toFixed(2);
  const start = performance.now();
  const obs = await predictive(model, [...GRID, x], [0, k]);
  const all = bands(obs, GRID.length + 1), ms = performance.now() - start;
  const at = all[GRID.length];
  document.getElementById("band").textContent =
    `obs at x = ${x.toFixed(2)}: median ${at[1].toFixed(3)}, 90% in [${at[0].toFixed(3)}, ${at[2].toFixed(3)}] (${ms.toFixed(0)} ms)`;
  drawPlot(model.meta, GRID, all.slice(0, GRID.length), x, at);
}

// YOLO11n's output (1, 84, anchors): boxes (cx, cy, w, h) in pixels, then 80 class scores
async function yolo(model, image) {
  const size = model.meta.imgsz;
  const out = await model.session.run({ [model.meta.inputs[0]]: new ort.Tensor("float32", image, [1, 3, size, size]) });
  return out[model.meta.outputs[0]];
}

async function detect(model, file) {
  const size = model.meta.imgsz, canvas = document.getElementById("detections"), g = canvas.getContext("2d");
  const bitmap = await createImageBitmap(file);
  const work = new OffscreenCanvas(size, size), wg = work.getContext("2d");
  wg.drawImage(bitmap, 0, 0, size, size);
  const rgba = wg.getImageData(0, 0, size, size).data, image = new Float32Array(3 * size * size);
  for (let i = 0; i < size * size; i++) for (let c = 0; c < 3; c++) image[c * size * size + i] = rgba[4 * i + c] / 255;
  const start = performance.now();
  const y = await yolo(model, image), ms = performance.now() - start;
  const anchors = y.dims[2], best = [];
  for (let a = 0; a < anchors; a++) {
    let score = 0;
    for (let c = 4; c < y.dims[1]; c++) score = Math.max(score, y.data[c * anchors + a]);
    best.push([score, a]);
  }
  best.sort((p, q) => q[0] - p[0]);
  const scale = canvas.width / size;
  g.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  g.strokeStyle = "rgb(230, 60, 30)";
  for (const [score, a] of best.slice(0, 10)) {
    const [cx, cy, w, h] = [0, 1, 2, 3].map((r) => y.data[r * anchors + a] * scale);
    g.strokeRect(cx - w / 2, cy - h / 2, w, h);
  }
  document.getElementById("yolostatus").textContent = `${ms.toFixed(0)} ms; top score ${best[0][0].toFixed(4)} (10 highest boxes drawn)`;
}

async function main() {
  const status = document.getElementById("status");
  try {
    const [reg, det] = await Promise.all([load("predictive"), load("yolo11n")]);
    document.getElementById("yolonote").textContent = det.meta.random_weights
      ? `${det.meta.description}: random weights, so the boxes mean nothing; build with web/build.py --weights for Ultralytics' own.`
      : det.meta.description;
    window.ptonnx = {
      predictive: async (xs, key) => packed(await predictive(reg, new Float64Array(base64ToBytes(xs).buffer), key)),
      yolo: async (image) => packed(await yolo(det, new Float32Array(base64ToBytes(image).buffer))),
      meta: { predictive: reg.meta, yolo: det.meta },
    };
    for (const id of ["x", "key"]) document.getElementById(id).addEventListener("input", () => redraw(reg));
    document.getElementById("image").addEventListener("change", (e) => e.target.files[0] && detect(det, e.target.files[0]));
    await redraw(reg);
    status.textContent = `ready (onnxruntime-web ${ort.env.versions ? ort.env.versions.web : ""})`;
    window.ptonnxReady = true;
  } catch (error) {
    status.textContent = `failed: ${error}`;
    window.ptonnxError = String(error);
  }
}
main();
