// Open the page in headless Chromium and run its models on given inputs:
//   node check.mjs URL REQUEST.json RESULT.json [SCREENSHOT.png [IMAGE]]
// REQUEST: {"predictive": [{"xs": [...], "key": [k0, k1]}, ...], "yolo": [base64 float32 image, ...]}
// RESULT: the same lists of outputs ({dims, type, data: base64}), from window.ptonnx
// (app.js), the page's own texts (`drawn`), after IMAGE was picked in its file input. Chromium is CHROMIUM (default /usr/bin/chromium, Debian's).
import { readFileSync, writeFileSync } from "node:fs";
import { chromium } from "playwright-core";

const [url, requestPath, resultPath, screenshot, image] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 1200 } });
  const console_ = [];
  page.on("console", (m) => console_.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => console_.push(`pageerror: ${e}`));
  await page.goto(url);
  await page.waitForFunction(() => window.ptonnxReady || window.ptonnxError, null, { timeout: 120000 });
  const error = await page.evaluate(() => window.ptonnxError);
  if (error) throw new Error(`the page failed: ${error}\n${console_.join("\n")}`);
  const request = JSON.parse(readFileSync(requestPath, "utf8"));
  // one run at a time: a session runs one call at once
  const result = await page.evaluate(async (req) => {
    const out = { predictive: [], yolo: [], status: document.getElementById("status").textContent };
    for (const r of req.predictive || []) out.predictive.push(await window.ptonnx.predictive(r.xs, r.key));
    for (const image of req.yolo || []) out.yolo.push(await window.ptonnx.yolo(image));
    return out;
  }, request);
  if (image) {
    await page.setInputFiles("#image", image);
    await page.waitForFunction(() => document.getElementById("yolostatus").textContent !== "", null, { timeout: 120000 });
  }
  result.drawn = await page.evaluate(() => ({
    band: document.getElementById("band").textContent,
    yolo: document.getElementById("yolostatus").textContent,
  }));
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
  writeFileSync(resultPath, JSON.stringify(result));
} finally {
  await browser.close();
}
