// The live step-through of `tinygpt serve` (GET /explain, drawing POST /v1/explain) in
// headless Chromium, driven by puppeteer-core (build/npm, from scripts/setup.sh --test):
// run by tests/cli/test_cli_serve_explain.sh against a server it started. Every number
// the page shows is checked against what `tinygpt explain` prints for the same model.
//
// usage: node explain_page_test.mjs BASE_URL API_KEY TINYGPT MODEL_FLAGS_JSON SCRATCH_DIR
//   BASE_URL: the server (http://127.0.0.1:PORT), started with --api-key API_KEY.
//   TINYGPT: the binary; MODEL_FLAGS_JSON: the flags naming the served model to explain,
//   e.g. '["--ckpt", "/tmp/run"]'. Screenshots go to SCRATCH_DIR.
//   Prints one "FAIL: ..." line per failed check on stderr, exits 1 if any.
import path from 'node:path';
import {execFileSync} from 'node:child_process';

import {launchChromium, layoutProblems, watchPage} from './browser_checks.mjs';

const [baseUrl, apiKey, tinygpt, modelFlagsJson, scratch] = process.argv.slice(2);
if (!scratch) throw new Error('usage: node explain_page_test.mjs BASE_URL API_KEY TINYGPT MODEL_FLAGS_JSON SCRATCH_DIR');
const modelFlags = JSON.parse(modelFlagsJson);
const origin = new URL(baseUrl).origin;

// `tinygpt explain` prints 4 decimals: half a unit of the last one, and 1e-6 for sums the
// server may add up in another order (its threads) than the command does.
const PRINTED_TOLERANCE = 5e-5 + 1e-6;

let failures = 0;
function fail(message) {
  console.error('FAIL: ' + message);
  failures++;
}

// ---------------------------------------------------------------------------------------------
// What the terminal shows: `tinygpt explain`'s text, parsed.

function explainText(prompt, {layer, head, target}) {
  const args = ['explain', ...modelFlags, '--prompt', prompt, '--layer', String(layer)];
  if (head !== undefined) args.push('--head', String(head));
  if (target) args.push('--target', target);
  return execFileSync(tinygpt, args, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']});
}

// The lines of one stage's section: from "--- Title  [id]" to the next section.
function sectionOf(text, id) {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith('--- ') && line.includes('[' + id + ']'));
  if (start < 0) return null;
  let end = start + 1;
  while (end < lines.length && !lines[end].startsWith('--- ') && !lines[end].startsWith('=== ')) end++;
  return lines.slice(start, end);
}

// The indices a printed slice shows (inspect/text_report.cpp): the first `head`, then the last `tail`.
function shownIndices(size, head, tail) {
  if (size <= head + tail) return Array.from({length: size}, (unused, i) => i);
  return [...Array.from({length: head}, (unused, i) => i), -1, ...Array.from({length: tail}, (unused, i) => size - tail + i)];
}

const cellNumber = (text) => text === '-inf' ? -Infinity : text === 'inf' ? Infinity : Number(text);

// A printed table under `label` ("head 1" or "output") in a stage's section: {rows, columns, cells: Map "r,c" -> value}.
// Its lines are fixed-width: "  " + "%4d " + the token quoted in 9 characters + " ", then 9 characters
// a value, or "   ..." where columns are left out.
function printedTable(section, label) {
  const at = section.findIndex((line) => line.startsWith('  ' + label + ' (') && line.endsWith(':'));
  if (at < 0) return null;
  const dims = /\(([\d, ]+)\)/.exec(section[at])[1].split(',').map(Number);
  const [rows, columns] = dims.slice(-2);
  const columnIndices = shownIndices(columns, 6, 2);
  const cells = new Map();
  let line = at + 1;
  for (const row of shownIndices(rows, 5, 3)) {
    const characters = Array.from(section[line++] || '');  // code points: a token is one column per character
    if (row < 0) continue;
    if (Number(characters.slice(2, 6).join('')) !== row) return null;
    let offset = 17;
    for (const column of columnIndices) {
      const width = column < 0 ? 6 : 9;
      if (column >= 0) cells.set(row + ',' + column, cellNumber(characters.slice(offset, offset + width).join('').trim()));
      offset += width;
    }
  }
  return {rows, columns, cells};
}

// Half a unit of the last digit of a value printed with `digits` significant digits (%.Ng).
const halfUnit = (value, digits) => value === 0 ? 0 : 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(value))) - digits + 1);

// ---------------------------------------------------------------------------------------------
// The server, asked directly.

async function explainDirect(body, key = apiKey) {
  const response = await fetch(baseUrl + '/v1/explain', {
    method: 'POST', headers: {'Content-Type': 'application/json', Authorization: 'Bearer ' + key}, body: JSON.stringify(body)});
  return {status: response.status, body: await response.json()};
}
const decodeF32 = (base64) => {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({length: bytes.length / 4}, (unused, i) => bytes.readFloatLE(4 * i));
};

const probe = await explainDirect({prompt: 'a'});
if (probe.status !== 200 || probe.body.object !== 'explain') {
  console.error(`FAIL: POST /v1/explain {"prompt": "a"}: HTTP ${probe.status} ${JSON.stringify(probe.body).slice(0, 300)}`);
  process.exit(1);
}
const config = probe.body.config;
const lastLayer = config.n_layer - 1;
for (const field of ['model', 'milliseconds']) {
  if (!(field in probe.body)) fail(`the response has no "${field}" (docs/walkthrough/live.md)`);
}

const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1400, height: 900});
  const explainRequests = [];
  watchPage(page, origin, fail, (request) => {
    if (request.url() === baseUrl + '/v1/explain') explainRequests.push(JSON.parse(request.postData()));
  });
  await page.goto(baseUrl + '/explain', {waitUntil: 'load'});
  if (await page.title() !== 'tinygpt step-through') fail(`GET /explain: the title is '${await page.title()}'`);

  // waitFor EXPECTED: the page drew the response to exactly this prompt, target and layer (and, given
  // EXPECTED.compare, prompt B's beside it).
  async function waitFor(expected, what) {
    try {
      await page.waitForFunction((e) => {
        const {response, compare} = window.explainState;
        return document.body.dataset.state === 'ready' && response && response.prompt === e.prompt &&
               (response.target || '') === e.target && response.layer === e.layer &&
               (!('compare' in e) || (compare && compare.response.prompt === e.compare && compare.response.layer === e.layer));
      }, {timeout: 30000}, expected);
      return true;
    } catch (timeout) {
      const shown = await page.evaluate(() => [document.body.dataset.state, document.getElementById('status').textContent]);
      fail(`${what}: the page did not draw ${JSON.stringify(expected)} (state '${shown[0]}': ${shown[1]})`);
      return false;
    }
  }
  async function setField(selector, text) {  // as a paste: the whole value at once, one input event
    await page.$eval(selector, (field, value) => {
      field.value = value;
      field.dispatchEvent(new Event('input', {bubbles: true}));
    }, text);
  }
  // The page's decoded values of one head of a stage, non-finite ones as text (JSON has no -Infinity);
  // of prompt B's walk-through in compare mode when `which` is 'b'.
  const pageHead = (stageId, head, which = 'a') => page.evaluate((id, h, w) => {
    const walk = w === 'b' ? window.explainState.compare : window.explainState;
    const stage = walk && walk.response.stages.find((s) => s.id === id);
    if (!stage) return null;
    const index = stage.tensors.findIndex((tensor) => tensor.label === 'head ' + h);
    if (index < 0) return null;
    const values = walk.decoded[id][index];
    return {shape: stage.tensors[index].shape, values: Array.from(values, (v) => Number.isFinite(v) ? v : String(v))};
  }, stageId, head, which).then((got) => got && {...got, values: got.values.map(Number)});
  const tokenCount = (which = 'a') => page.evaluate((w) =>
    (w === 'b' ? window.explainState.compare : window.explainState).response.tokens.length, which);

  // compareAttention WHAT PROMPT LAYER [TARGET] [WHICH]: every head's scores, mask and weights in the page
  // (prompt B's with WHICH 'b') equal the printed tables of `tinygpt explain --layer L --head H`.
  // Returns the weights, by head.
  async function compareAttention(what, prompt, layer, target = '', which = 'a') {
    const tokens = await tokenCount(which);
    const weights = [];
    for (let head = 0; head < config.n_head; head++) {
      const text = explainText(prompt, {layer, head, target});
      for (const kind of ['scores', 'mask', 'weights']) {
        const id = `block${layer}.${kind}`;
        const section = sectionOf(text, id);
        const table = section && printedTable(section, 'head ' + head);
        const shown = await pageHead(id, head, which);
        if (!table) { fail(`${what}: no head ${head} table of [${id}] in tinygpt explain's output`); continue; }
        if (!shown) { fail(`${what}: the page has no head ${head} of ${id}`); continue; }
        if (table.rows !== tokens || table.columns !== tokens || shown.values.length !== tokens * tokens) {
          fail(`${what}: ${id} head ${head}: the terminal's (${table.rows}, ${table.columns}), the page's ${shown.values.length} values for ${tokens} tokens`);
          continue;
        }
        let wrong = 0;
        for (const [at, printed] of table.cells) {
          const [row, column] = at.split(',').map(Number);
          const value = shown.values[row * tokens + column];
          const same = Number.isFinite(printed) ? Math.abs(value - printed) <= PRINTED_TOLERANCE : value === printed;
          if (!same && wrong++ < 3) fail(`${what}: ${id} head ${head} [${row}, ${column}]: the page has ${value}, tinygpt explain prints ${printed}`);
        }
        if (table.cells.size < Math.min(tokens, 8) ** 2) fail(`${what}: ${id}: only ${table.cells.size} printed values compared`);
        if (kind === 'weights') weights[head] = {values: shown.values, table};
      }
    }
    return weights;
  }

  // The heatmaps drawn for the layer: one canvas per stage and head, every position.
  async function checkCanvases(what, layer, tokens) {
    const canvases = await page.$$eval('canvas.heatmap', (all) => all.map((canvas) => ({
      stage: canvas.dataset.stage, head: canvas.dataset.head, t: Number(canvas.dataset.t), cell: Number(canvas.dataset.cell),
      cssWidth: canvas.getBoundingClientRect().width, width: canvas.width, ratio: window.devicePixelRatio,
      caption: canvas.closest('figure').querySelector('figcaption').textContent})));
    for (const kind of ['scores', 'mask', 'weights']) {
      for (let head = 0; head < config.n_head; head++) {
        const canvas = canvases.find((c) => c.stage === `block${layer}.${kind}` && c.head === String(head));
        if (!canvas) { fail(`${what}: no heatmap of block${layer}.${kind} head ${head}`); continue; }
        if (canvas.t !== tokens) fail(`${what}: block${layer}.${kind} head ${head} says ${canvas.t} positions, not ${tokens}`);
        if (Math.abs(canvas.cssWidth - tokens * canvas.cell) > 0.5 || canvas.width !== Math.round(tokens * canvas.cell * canvas.ratio)) {
          fail(`${what}: block${layer}.${kind} head ${head} is ${canvas.cssWidth} px (${canvas.width} drawn) for ${tokens} cells of ${canvas.cell} px`);
        }
        if (canvas.caption !== 'head ' + head) fail(`${what}: a heatmap is labelled '${canvas.caption}', not 'head ${head}'`);
      }
    }
    if (canvases.length !== 3 * config.n_head) fail(`${what}: ${canvases.length} heatmaps, expected ${3 * config.n_head}`);
  }

  // hoverCell: the mouse over one cell of a heatmap (in compare mode, of prompt 'a', 'b' or the
  // 'difference'); returns the tooltip's text and the cell it names.
  async function hoverCell(stageId, head, query, key, prompt = '') {
    const which = prompt ? `[data-prompt="${prompt}"]` : '';
    const canvas = await page.$(`canvas.heatmap[data-stage="${stageId}"][data-head="${head}"]${which}`);
    await canvas.evaluate((c) => c.scrollIntoView({block: 'center', inline: 'center'}));
    const box = await canvas.boundingBox();
    const size = Number(await canvas.evaluate((c) => c.dataset.cell));
    await page.mouse.move(box.x + (key + 0.5) * size, box.y + (query + 0.5) * size);
    await page.waitForFunction((q, k) => {
      const tip = document.getElementById('tooltip');
      return !tip.hidden && tip.dataset.query === String(q) && tip.dataset.key === String(k);
    }, {timeout: 5000}, query, key).catch(() => {});
    const tip = await page.$eval('#tooltip', (t) => ({text: t.innerText, hidden: t.hidden, query: t.dataset.query, key: t.dataset.key}));
    await page.mouse.move(1, 1);
    return tip;
  }

  // The colour of a heatmap's pixel at the top edge of a row, middle column (where the pin's frame goes).
  const rowEdgePixel = (stageId, head, row) => page.evaluate((id, h, r) => {
    const canvas = document.querySelector(`canvas.heatmap[data-stage="${id}"][data-head="${h}"]`);
    const scaled = canvas.height / Number(canvas.dataset.t);
    const y = Math.floor(Math.max(window.devicePixelRatio, r * scaled));
    return Array.from(canvas.getContext('2d').getImageData(Math.floor(canvas.width / 2), y, 1, 1).data.slice(0, 3));
  }, stageId, head, row);
  const pinColour = await page.evaluate(() => window.explainState.pinColour);

  // The key first (settings), then a prompt typed key by key: one request after the typing pauses.
  await page.click('#settings summary');
  await page.type('#api-key', apiKey);
  const firstPrompt = 'To be or';
  const requestsBefore = explainRequests.length;
  await page.type('#prompt', firstPrompt);
  if (await waitFor({prompt: firstPrompt, target: '', layer: 0}, 'typing a prompt')) {
    const sent = explainRequests.length - requestsBefore;
    if (sent < 1 || sent > firstPrompt.length / 2) fail(`typing ${firstPrompt.length} characters sent ${sent} requests: no pause is awaited`);
    const last = explainRequests.at(-1);
    if (last.prompt !== firstPrompt || last.layer !== 0 || 'target' in last) fail(`the request sent: ${JSON.stringify(last)}`);
    const status = await page.$eval('#status', (s) => s.textContent);
    const milliseconds = await page.evaluate(() => window.explainState.response.milliseconds);
    if (typeof milliseconds !== 'number' || !status.includes(milliseconds.toFixed(1) + ' ms on the server')) {
      fail(`the server's time is not shown: '${status}' (milliseconds: ${milliseconds})`);
    }
    const layers = await page.$$eval('#layer option', (options) => options.map((option) => option.value).join(','));
    const expectedLayers = Array.from({length: config.n_layer}, (unused, i) => i).join(',');
    if (layers !== expectedLayers) fail(`the block selector offers ${layers}, expected ${expectedLayers}`);
    const chips = await page.$$eval('#tokens .chip', (all) => all.map((chip) => [chip.firstChild.textContent, chip.title]));
    const tokens = await page.evaluate(() => window.explainState.response.tokens);
    if (chips.length !== tokens.length) fail(`${chips.length} token chips for ${tokens.length} tokens`);
    tokens.forEach((token, i) => {
      const expected = token.text.replace(/ /g, '␣');
      if (chips[i] && (chips[i][0] !== expected || !chips[i][1].includes(JSON.stringify(token.text)))) {
        fail(`token ${i} ${JSON.stringify(token.text)} is shown as '${chips[i][0]}' titled '${chips[i][1]}'`);
      }
    });
  }

  // The last block: every head of its scores, mask and weights against the terminal.
  await page.select('#layer', String(lastLayer));
  let weightsBefore = [];
  if (await waitFor({prompt: firstPrompt, target: '', layer: lastLayer}, 'choosing the last block')) {
    const tokens = await page.evaluate(() => window.explainState.response.tokens.length);
    await checkCanvases('"' + firstPrompt + '"', lastLayer, tokens);
    weightsBefore = await compareAttention('"' + firstPrompt + '"', firstPrompt, lastLayer);

    // The colour scales printed: weights 0 to 1; scores and the mask from their smallest finite value to
    // their largest, over every head (the terminal's stats line of the stage).
    const stats = explainText(firstPrompt, {layer: lastLayer});
    for (const kind of ['scores', 'mask', 'weights']) {
      const id = `block${lastLayer}.${kind}`;
      const legend = await page.$eval(`.stage-group[data-stage="${id}"] .legend`, (l) =>
        [l.querySelector('.legend-low').textContent, l.querySelector('.legend-high').textContent]).catch(() => null);
      const printed = /^ {2}stats .* min (\S+) +max (\S+)$/m.exec((sectionOf(stats, id) || []).join('\n'));
      const want = kind === 'weights' ? [0, 1] : printed && [Number(printed[1]), Number(printed[2])];
      if (!legend || !want || legend.some((text, i) => !(Math.abs(Number(text) - want[i]) <= 2.01 * halfUnit(want[i], 4)))) {
        fail(`${id}: the colour scale printed is ${legend}, expected ${want}`);
      }
    }
    // Each stage's title, formula and explanation, as the terminal prints the formula's first line.
    const docs = await page.$$eval('#stages details', (all) => all.map((d) => [d.dataset.stage, d.querySelector('pre').textContent,
                                                                              d.querySelector('p').textContent]));
    const stageIds = await page.evaluate(() => window.explainState.response.stages.map((stage) => stage.id));
    if (docs.map((d) => d[0]).join() !== stageIds.join()) fail(`the stages described: ${docs.map((d) => d[0])}, sent: ${stageIds}`);
    for (const [id, formula, explanation] of docs) {
      const section = sectionOf(stats, id);
      if (section && !section.some((l) => l.startsWith('  formula  ' + formula.split('\n')[0]))) fail(`${id}: the formula shown is '${formula}'`);
      if (!explanation) fail(`${id}: no explanation shown`);
    }

    // Hovering a weight shows its exact float32 value; a masked score shows -Infinity.
    const head = config.n_head - 1, query = tokens - 1, key = 1;
    const tip = await hoverCell(`block${lastLayer}.weights`, head, query, key);
    const match = /weights\[(\d+), (\d+)\] = (\S+)/.exec(tip.text);
    const expected = weightsBefore[head] && weightsBefore[head].table.cells.get(query + ',' + key);
    if (tip.hidden || !match || Number(match[1]) !== query || Number(match[2]) !== key) {
      fail(`hovering weights [${query}, ${key}] of head ${head}: the tooltip says '${tip.text}'`);
    } else {
      const value = Number(match[3]);
      if (!(Math.abs(value - expected) <= PRINTED_TOLERANCE)) fail(`the tooltip's weight ${value}, tinygpt explain prints ${expected}`);
      if (Math.fround(value) !== weightsBefore[head].values[query * tokens + key]) {
        fail(`the tooltip's weight ${match[3]} is not the float32 ${weightsBefore[head].values[query * tokens + key]} exactly`);
      }
      if (!tip.text.includes(`query ${query} `) || !tip.text.includes(`key ${key} `)) fail(`the tooltip names no tokens: '${tip.text}'`);
    }
    const maskTip = await hoverCell(`block${lastLayer}.mask`, 0, 0, 1);
    if (!/mask\[0, 1\] = -Infinity/.test(maskTip.text)) fail(`hovering a masked score: the tooltip says '${maskTip.text}'`);

    // Pin a token: its chip, every heatmap's row frame, the row table, the predictions.
    const pin = 2;
    await page.click(`#tokens .chip[data-position="${pin}"]`);
    await page.waitForFunction((p) => document.body.dataset.pinned === String(p), {timeout: 5000}, pin).catch(() => {});
    // "Why this token" is asked again for the pinned position; its answer restyles the chips in
    // place, so the button clicked is still there and still focused.
    const asked = await page.waitForFunction((p) => document.body.dataset.state === 'ready' &&
      window.explainState.response.attribution.position === p, {timeout: 30000}, pin).then(() => true).catch(() => false);
    if (!asked) fail(`pinned ${pin}: "why this token" is about position ${await page.evaluate(() => window.explainState.response.attribution.position)}`);
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.closest('#tokens') &&
                                              document.activeElement.dataset.position);
    if (focused !== String(pin)) fail(`after pinning ${pin} and its answer, the focus is on ${focused}, not the chip clicked`);
    const chip = await page.$eval(`#tokens .chip[data-position="${pin}"]`, (c) => [c.classList.contains('pinned'), c.getAttribute('aria-pressed')]);
    if (!chip[0] || chip[1] !== 'true') fail(`a clicked token is not shown pinned: ${chip}`);
    const framed = await page.$$eval('canvas.heatmap', (all, p) => all.every((c) => c.dataset.pinned === String(p)), pin);
    if (!framed) fail('not every heatmap frames the pinned row');
    const edge = await rowEdgePixel(`block${lastLayer}.weights`, 0, pin);
    const elsewhere = await rowEdgePixel(`block${lastLayer}.weights`, 0, tokens - 2);
    if (edge.join() !== pinColour.join()) fail(`the pinned row's frame is not drawn: pixel ${edge}, expected ${pinColour}`);
    if (elsewhere.join() === pinColour.join()) fail('a row that is not pinned is framed');
    const rowTitle = await page.$eval('#row-title', (t) => t.textContent);
    const predictionsTitle = await page.$eval('#predictions-title', (t) => t.textContent);
    if (!rowTitle.startsWith(`Position ${pin} `) || !predictionsTitle.includes(`position ${pin} `)) {
      fail(`pinned ${pin}: the panels say '${rowTitle}' and '${predictionsTitle}'`);
    }
    // The row table: the pinned position's row of the block's last stage, as the terminal prints it.
    const text = explainText(firstPrompt, {layer: lastLayer});
    const stageId = `block${lastLayer}.residual_2`;
    const printed = sectionOf(text, stageId) && printedTable(sectionOf(text, stageId), 'output');
    const shownRow = await page.$$eval(`#row-table tr[data-stage="${stageId}"] td.number`, (cells) => cells.map((c) => c.textContent));
    if (!printed || shownRow.length !== 10) fail(`the row table has no row of ${stageId} (${shownRow.length} cells)`);
    else {
      for (let column = 0; column < 6; column++) {
        const want = printed.cells.get(pin + ',' + column), got = Number(shownRow[2 + column]);
        if (!(Math.abs(got - want) <= 2 * PRINTED_TOLERANCE)) fail(`the row table's ${stageId}[${pin}, ${column}] is ${got}, tinygpt explain prints ${want}`);
      }
    }
    const topShown = await page.$$eval('#predictions .bar-row', (rows) => rows.map((row) => Number(row.dataset.id)));
    const topSent = await page.evaluate((p) => window.explainState.response.predictions.find((e) => e.position === p).top.map((t) => t.id), pin);
    if (topShown.join() !== topSent.join()) fail(`the predictions after the pinned position: ${topShown}, the server's ${topSent}`);

    // Again: unpinned, the last position is shown and no frame on the old row.
    await page.click(`#tokens .chip[data-position="${pin}"]`);
    await page.waitForFunction((p) => document.body.dataset.pinned === String(p), {timeout: 5000}, tokens - 1).catch(() => {});
    const unpinned = await page.$eval(`#tokens .chip[data-position="${pin}"]`, (c) => c.getAttribute('aria-pressed'));
    if (unpinned !== 'false' || (await rowEdgePixel(`block${lastLayer}.weights`, 0, pin)).join() === pinColour.join()) {
      fail('a second click does not unpin the token');
    }
  }

  // An edit: one character changed, the heatmaps follow the new prompt.
  await page.focus('#prompt');
  await page.keyboard.press('End');
  await page.keyboard.press('Backspace');
  await page.keyboard.type('n');
  const editedPrompt = firstPrompt.slice(0, -1) + 'n';
  if (await waitFor({prompt: editedPrompt, target: '', layer: lastLayer}, 'editing the prompt')) {
    const weightsAfter = await compareAttention('"' + editedPrompt + '"', editedPrompt, lastLayer);
    const last = weightsBefore[0] && weightsAfter[0] ? weightsAfter[0].values.length : 0;
    if (last && weightsBefore[0].values.slice(-8).join() === weightsAfter[0].values.slice(-8).join()) {
      fail('after an edit the last row of the weights did not change');
    }
  }

  // A prompt as long as the context: every position drawn; and zoomed in, scrolled, not cut.
  const line = 'First Citizen: Before we proceed any further, hear me speak. ';
  const longPrompt = line.repeat(Math.ceil(config.block_size / line.length)).slice(0, config.block_size);
  await setField('#prompt', longPrompt);
  if (await waitFor({prompt: longPrompt, target: '', layer: lastLayer}, 'a prompt as long as the context')) {
    const tokens = await page.evaluate(() => window.explainState.response.tokens.length);
    if (tokens !== config.block_size) fail(`the long prompt is ${tokens} tokens, not ${config.block_size}`);
    await checkCanvases('the long prompt', lastLayer, tokens);
    const weights = await compareAttention('the long prompt', longPrompt, lastLayer);
    // Every value the page holds is the server's, not only those the terminal prints.
    const direct = await explainDirect({prompt: longPrompt, layer: lastLayer});
    const sent = direct.body.stages && direct.body.stages.find((s) => s.id === `block${lastLayer}.weights`);
    for (let head = 0; sent && head < config.n_head; head++) {
      const values = decodeF32(sent.tensors[head].f32);
      if (!weights[head] || values.join() !== weights[head].values.join()) fail(`the long prompt: head ${head}'s weights differ from the server's`);
    }
    const tip = await hoverCell(`block${lastLayer}.weights`, 0, tokens - 1, tokens - 1);
    const match = /= (\S+)/.exec(tip.text);
    const printed = weights[0] && weights[0].table.cells.get(`${tokens - 1},${tokens - 1}`);
    if (!match || !(Math.abs(Number(match[1]) - printed) <= PRINTED_TOLERANCE)) {
      fail(`the long prompt: the last cell's tooltip says '${tip.text}', tinygpt explain prints ${printed}`);
    }
    await page.select('#zoom', '8');
    const zoomed = await page.$eval(`canvas.heatmap[data-stage="block${lastLayer}.weights"]`, (c) => ({
      cell: Number(c.dataset.cell), width: c.getBoundingClientRect().width,
      scrollWidth: c.parentElement.scrollWidth, clientWidth: c.parentElement.clientWidth}));
    if (zoomed.scrollWidth < zoomed.width || Math.abs(zoomed.width - tokens * zoomed.cell) > 0.5) {
      fail(`zoomed in: a heatmap of ${tokens} cells of ${zoomed.cell} px is ${zoomed.width} px, scrolling ${zoomed.scrollWidth}`);
    }
    await page.select('#zoom', '1');
  }

  // One character more than the context: the server's refusal, shown as its words.
  await setField('#prompt', longPrompt + 'x');
  await page.waitForFunction(() => document.body.dataset.state === 'error', {timeout: 30000}).catch(() => {});
  const tooLong = await explainDirect({prompt: longPrompt + 'x', layer: lastLayer});
  const tooLongShown = await page.$eval('#status', (s) => s.textContent);
  if (tooLong.status !== 400 || !tooLong.body.error || !tooLongShown.includes(tooLong.body.error.message)) {
    fail(`a prompt beyond the context: the page shows '${tooLongShown}', the server said ${tooLong.status} ${JSON.stringify(tooLong.body)}`);
  }

  // A target: the loss, the perplexity, each target token's probability and the gradient norms.
  const lossPrompt = 'To be or', target = ' not';
  await setField('#prompt', lossPrompt);
  await page.type('#target', target);
  if (await waitFor({prompt: lossPrompt, target, layer: lastLayer}, 'a target')) {
    const text = explainText(lossPrompt, {layer: lastLayer, target});
    const loss = /^ {2}loss (\S+) \(mean cross-entropy, nats\) {3}perplexity (\S+)$/m.exec(text);
    const shown = await page.evaluate(() => ({
      loss: document.getElementById('loss').textContent, perplexity: document.getElementById('perplexity').textContent,
      hidden: document.getElementById('loss-panel').hidden,
      targets: [...document.querySelectorAll('#targets .bar-row')].map((r) => [Number(r.dataset.position), Number(r.dataset.probability)]),
      gradients: [...document.querySelectorAll('#gradients .gradient')].map((g) => [g.dataset.layer, Number(g.dataset.activation), Number(g.dataset.parameter)]),
    }));
    if (!loss) fail('tinygpt explain --target printed no loss line');
    else if (shown.hidden) fail('with a target, the loss is not shown');
    else {
      for (const [name, printed, got] of [['loss', loss[1], shown.loss], ['perplexity', loss[2], shown.perplexity]]) {
        const want = Number(printed), value = Number(got);
        // Printed with 4 significant digits by the terminal and 4 (or 3) decimals by the page.
        if (!(Math.abs(value - want) <= halfUnit(want, 4) + 5e-4)) fail(`the page's ${name} is ${got}, tinygpt explain prints ${printed}`);
      }
    }
    const lossSection = text.slice(text.indexOf('=== Loss on the target'), text.indexOf('=== Gradients'));
    const targetLines = [...lossSection.matchAll(/^ {2} *(\d+) {2}'.*' +(\S+) +(\S+)$/gm)].map((m) => [Number(m[1]), Number(m[2])]);
    if (targetLines.length !== shown.targets.length || targetLines.length === 0) {
      fail(`${shown.targets.length} target probabilities shown, tinygpt explain prints ${targetLines.length}`);
    }
    targetLines.forEach(([position, probability], i) => {
      const [gotPosition, got] = shown.targets[i] || [];
      if (gotPosition !== position || !(Math.abs(got - probability) <= halfUnit(probability, 3) * 1.001)) {
        fail(`target ${i}: the page has position ${gotPosition} p ${got}, tinygpt explain prints ${position} p ${probability}`);
      }
    });
    const section = text.slice(text.indexOf('=== Gradients')).split('\n\n')[0];
    const gradientLines = section.split('\n').slice(2).filter((l) => /^ {2}\S/.test(l) && !l.startsWith('  (')).map((l) => {
      const numbers = l.slice(17).split(/[ #]+/).filter(Boolean).map(Number);
      return [l.slice(2, 17).trim(), numbers[0], numbers[1]];
    });
    if (gradientLines.length === 0 || gradientLines.length !== shown.gradients.length) {
      fail(`${shown.gradients.length} gradient rows shown, tinygpt explain prints ${gradientLines.length}`);
    }
    gradientLines.forEach(([name, activation, parameter], i) => {
      const [gotName, gotActivation, gotParameter] = shown.gradients[i] || [];
      const close = (got, want) => Math.abs(got - want) <= halfUnit(want, 4) * 1.01 + 1e-6 * Math.abs(want);
      if (gotName !== name || !close(gotActivation, activation) || !close(gotParameter, parameter)) {
        fail(`gradients of ${name}: the page has ${gotName} ${gotActivation} ${gotParameter}, tinygpt explain prints ${activation} ${parameter}`);
      }
    });
    const tokens = await page.evaluate(() => window.explainState.response.tokens.length);
    await checkCanvases('with a target', lastLayer, tokens);

    // "Why this token": the page's gradient x input per position equals the terminal's.
    const why = await page.evaluate(() => ({
      position: window.explainState.response.attribution.position,
      rows: [...document.querySelectorAll('#why .bar-row')].map((r) => [Number(r.dataset.position), Number(r.dataset.score)]),
    }));
    const whyLines = [...text.slice(text.indexOf('=== Why')).split('\n\n')[0].matchAll(/^ +(\d+) '.*?' +(\S+)/gm)]
      .map((m) => [Number(m[1]), Number(m[2])]);
    // A value printed in 9 characters: 4 decimals, or 2 significant digits with an exponent.
    const printedClose = (got, want) => Math.abs(got - want) <= (Math.abs(want) < 1e-4 && want !== 0
      ? halfUnit(want, 2) * 1.01 : 5e-5 + 1e-6);
    if (why.position !== lossPrompt.length - 1) fail(`the attribution is for position ${why.position}, not the prompt's last`);
    if (whyLines.length === 0 || whyLines.length !== why.rows.length) {
      fail(`${why.rows.length} attribution rows shown, tinygpt explain prints ${whyLines.length}`);
    }
    whyLines.forEach(([position, score], i) => {
      const [gotPosition, got] = why.rows[i] || [];
      if (gotPosition !== position || !printedClose(got, score)) {
        fail(`attribution ${i}: the page has position ${gotPosition} ${got}, tinygpt explain prints ${position} ${score}`);
      }
    });

    // The stream's gradient by position and layer: one row per block entered and ln_f, one column per token.
    const stream = await page.evaluate(() => ({
      sent: window.explainState.response.loss.stream_gradient_norms,
      shown: [...document.querySelectorAll('#stream-gradients tr')].slice(1).map((r) =>
        [...r.querySelectorAll('td')].map((c) => Number(c.dataset.value))),
      layers: window.explainState.response.config.n_layer,
    }));
    if (stream.shown.length !== stream.layers + 1 || stream.shown.some((row) => row.length !== tokens) ||
        JSON.stringify(stream.shown) !== JSON.stringify(stream.sent)) {
      fail(`the stream's gradient table: ${JSON.stringify(stream.shown)} for ${JSON.stringify(stream.sent)}`);
    }

    // The gradient view: every head's dLoss/dweights equals what tinygpt explain --target --head prints.
    await page.select('#show', 'gradients');
    await page.waitForFunction(() => document.querySelector('canvas.heatmap[data-showing="gradients"]'), {timeout: 30000})
      .catch(() => fail('choosing the gradients redrew no heatmap'));
    const weightsId = `block${lastLayer}.weights`;
    const heads = await page.evaluate(() => window.explainState.response.config.n_head);
    for (let head = 0; head < heads; head++) {
      const section = sectionOf(explainText(lossPrompt, {layer: lastLayer, head, target}), weightsId);
      const table = section && printedTable(section, `dLoss/d(head ${head})`);
      const got = await page.evaluate((id, h) => Array.from(window.explainState.gradients[id][h] || []), weightsId, head);
      if (!table) {
        fail(`tinygpt explain --target --head ${head} printed no dLoss/d(head ${head}) table for ${weightsId}`);
        continue;
      }
      if (got.length !== table.rows * table.columns) fail(`head ${head}: ${got.length} gradient values, expected ${table.rows}²`);
      let wrong = 0;
      for (const [at, want] of table.cells) {
        const [row, column] = at.split(',').map(Number);
        if (!printedClose(got[row * table.columns + column], want)) wrong++;
      }
      if (wrong > 0) fail(`head ${head}: ${wrong} of dLoss/d weights differ from tinygpt explain's`);
    }
    const drawn = await page.$$eval(`canvas.heatmap[data-stage="${weightsId}"][data-showing="gradients"]`, (c) => c.length);
    if (drawn !== heads) fail(`${drawn} gradient heatmaps of ${weightsId} drawn, for ${heads} heads`);
    const rowTitle = await page.$eval('#row-title', (t) => t.textContent);
    if (!rowTitle.startsWith('dLoss/d at position')) fail(`the pinned row's title in the gradient view: '${rowTitle}'`);
    await page.select('#show', 'values');
    await page.waitForFunction(() => !document.querySelector('canvas.heatmap[data-showing="gradients"]'), {timeout: 30000})
      .catch(() => fail('going back to the values left gradient heatmaps'));
  }

  // A wrong key: the server's refusal as text; the right one brings the drawing back.
  await setField('#api-key', 'wrong-key');
  await page.waitForFunction(() => document.body.dataset.state === 'error', {timeout: 30000}).catch(() => {});
  const refusal = await explainDirect({prompt: lossPrompt}, 'wrong-key');
  const refusalShown = await page.$eval('#status', (s) => s.textContent);
  if (refusal.status !== 401 || !refusal.body.error || !refusalShown.includes(refusal.body.error.message)) {
    fail(`a wrong key: the page shows '${refusalShown}', the server said ${refusal.status} ${JSON.stringify(refusal.body)}`);
  }
  await setField('#api-key', apiKey);
  await waitFor({prompt: lossPrompt, target, layer: lastLayer}, 'the right key again');
  await page.click('#tokens .chip[data-position="3"]');

  // The layout at a phone's width and a wide screen's, settings open, a token pinned: nothing
  // overlaps, no text overflows its box.
  // Table cells are laid out by the table (their collapsed borders touch): the table is checked whole.
  const layoutSelector = '.panel, .panel > *, button, input, textarea, select, label, summary, h1, h2, h3, #model, ' +
    '#status, canvas, figcaption, .legend > *, .bar-row > *, .figures > *, .key > *, .note, table, .chip, .map-name';
  const unboxed = ['INPUT', 'TEXTAREA', 'SELECT', 'SCRIPT', 'CANVAS'];
  for (const [width, height] of [[1400, 900], [360, 800]]) {
    await page.setViewport({width, height});
    await page.mouse.move(1, 1);
    for (const problem of await layoutProblems(page, layoutSelector, unboxed)) fail(`at ${width} px: ${problem}`);
    await page.screenshot({path: path.join(scratch, `explain-${width}.png`), fullPage: true});
  }

  // Compare mode: prompt B beside A with the same block and target. B's heatmaps are what
  // `tinygpt explain` prints for B; B - A is the difference of the two printed tables, drawn red where
  // B is higher and blue where lower; hovering shows both values and the difference.
  await page.setViewport({width: 1400, height: 900});
  const promptB = 'To sea or';
  await page.click('#compare');
  await setField('#prompt-b', promptB);
  const comparing = {prompt: lossPrompt, target, layer: lastLayer, compare: promptB};
  // A token was pinned before compare mode, so B's "why this token" follows it once B's length is
  // known: the page asks again after B's first answer, and draws once more.
  const attributions = () => page.evaluate(() => {
    const {response, compare} = window.explainState;
    return [response.attribution.position, compare && compare.response.attribution.position];
  });
  const settled = (positions) => page.waitForFunction((want) => {
    const {response, compare} = window.explainState;
    return document.body.dataset.state === 'ready' && compare && response.attribution.position === want[0] &&
           compare.response.attribution.position === want[1];
  }, {timeout: 30000}, positions).then(() => true).catch(() => false);
  const pinned = Number(await page.evaluate(() => document.body.dataset.pinned));
  if (await waitFor(comparing, 'compare mode') && (await settled([pinned, pinned]) ||
      fail(`compare mode, ${pinned} pinned: "why" is about positions ${await attributions()}`))) {
    const [tokensA, tokensB] = [await tokenCount('a'), await tokenCount('b')];
    const grid = Math.max(tokensA, tokensB), common = Math.min(tokensA, tokensB);
    if (tokensA === tokensB) fail(`compare mode: prompts of ${tokensA} tokens each do not test positions one prompt lacks`);
    const weightsA = await compareAttention('compare mode, A', lossPrompt, lastLayer, target);
    const weightsB = await compareAttention('compare mode, B "' + promptB + '"', promptB, lastLayer, target, 'b');

    const weightsId = `block${lastLayer}.weights`;
    for (let head = 0; head < config.n_head; head++) {
      if (!weightsA[head] || !weightsB[head]) continue;
      const difference = await page.evaluate((id, h) => Array.from(window.explainState.differences[id][h],
                                                                     (v) => Number.isNaN(v) ? null : v), weightsId, head);
      if (difference.length !== grid * grid) { fail(`head ${head}: ${difference.length} differences for ${grid}² cells`); continue; }
      let wrong = 0;
      for (let query = 0; query < grid; query++) {
        for (let key = 0; key < grid; key++) {
          const got = difference[query * grid + key];
          const reached = query < common && key < common && key <= query;
          const exactly = reached ? weightsB[head].values[query * tokensB + key] - weightsA[head].values[query * tokensA + key] : null;
          const [printedA, printedB] = [weightsA[head], weightsB[head]].map((w) => w.table.cells.get(query + ',' + key));
          const printedClose = printedA === undefined || printedB === undefined || !reached ||
                               Math.abs(got - (printedB - printedA)) <= 2 * PRINTED_TOLERANCE;
          if ((got !== exactly || !printedClose) && wrong++ < 3) {
            fail(`B − A of ${weightsId} head ${head} [${query}, ${key}] is ${got}; B's ${printedB} − A's ${printedA} printed by tinygpt explain`);
          }
        }
      }
      // Drawn red where B is higher, blue where lower, grey where only one prompt reaches.
      const cells = difference.map((value, at) => [value, at]).filter(([value]) => value !== null && Math.abs(value) > 0.01);
      const highest = cells.reduce((best, cell) => (cell[0] > (best ? best[0] : 0) ? cell : best), null);
      const lowest = cells.reduce((best, cell) => (cell[0] < (best ? best[0] : 0) ? cell : best), null);
      const pixel = (at) => page.evaluate((id, h, q, k) => {
        const canvas = document.querySelector(`canvas.heatmap[data-stage="${id}"][data-head="${h}"][data-prompt="difference"]`);
        const scaled = canvas.height / Number(canvas.dataset.t);
        return Array.from(canvas.getContext('2d').getImageData(Math.floor((k + 0.5) * scaled), Math.floor((q + 0.5) * scaled), 1, 1).data.slice(0, 3));
      }, weightsId, head, Math.floor(at / grid), at % grid);
      if (highest) {
        const [r, , b] = await pixel(highest[1]);
        if (!(r > b + 40)) fail(`head ${head}: the largest B − A (${highest[0]}) is drawn ${[r, b]} (red, blue), not red`);
      }
      if (lowest) {
        const [r, , b] = await pixel(lowest[1]);
        if (!(b > r + 40)) fail(`head ${head}: the lowest B − A (${lowest[0]}) is drawn ${[r, b]} (red, blue), not blue`);
      }
      const onlyOne = await pixel((grid - 1) * grid);
      if (onlyOne.join() !== '222,224,228') fail(`head ${head}: a position only one prompt has is drawn ${onlyOne}`);
    }

    // A head's three heatmaps for each stage, on the longer prompt's grid.
    const canvases = await page.$$eval('canvas.heatmap', (all) => all.map((c) => [c.dataset.stage, c.dataset.head, c.dataset.prompt, Number(c.dataset.t)]));
    for (const kind of ['scores', 'mask', 'weights']) {
      for (let head = 0; head < config.n_head; head++) {
        for (const prompt of ['a', 'b', 'difference']) {
          const found = canvases.filter((c) => c[0] === `block${lastLayer}.${kind}` && c[1] === String(head) && c[2] === prompt);
          if (found.length !== 1 || found[0][3] !== grid) fail(`compare mode: block${lastLayer}.${kind} head ${head} ${prompt}: ${JSON.stringify(found)}`);
        }
      }
    }

    // Hovering B − A: A's exact value, B's, and their difference.
    const [query, key] = [common - 1, 1];
    const tip = await hoverCell(weightsId, 0, query, key, 'difference');
    const a = /A: weights\[(\d+), (\d+)\] = (\S+)/.exec(tip.text), b = /B: weights\[(\d+), (\d+)\] = (\S+)/.exec(tip.text);
    const d = /B − A = (\S+)/.exec(tip.text);
    if (!a || !b || !d || Number(a[1]) !== query || Number(a[2]) !== key || Number(b[1]) !== query || Number(b[2]) !== key) {
      fail(`hovering B − A [${query}, ${key}]: the tooltip says '${tip.text}'`);
    } else if (weightsA[0] && weightsB[0]) {
      const [valueA, valueB, shownDifference] = [Number(a[3]), Number(b[3]), Number(d[1])];
      if (Math.fround(valueA) !== weightsA[0].values[query * tokensA + key] || Math.fround(valueB) !== weightsB[0].values[query * tokensB + key]) {
        fail(`the tooltip's A ${a[3]} and B ${b[3]} are not the float32 values ${weightsA[0].values[query * tokensA + key]}, ${weightsB[0].values[query * tokensB + key]}`);
      }
      if (!(Math.abs(valueB - weightsB[0].table.cells.get(query + ',' + key)) <= PRINTED_TOLERANCE)) {
        fail(`the tooltip's B ${valueB}, tinygpt explain prints ${weightsB[0].table.cells.get(query + ',' + key)} for "${promptB}"`);
      }
      if (!(Math.abs(shownDifference - (valueB - valueA)) <= 1e-5 * Math.abs(valueB - valueA) + 1e-9)) {
        fail(`the tooltip's B − A ${shownDifference} for A ${valueA} and B ${valueB}`);
      }
    }

    // The tokens that differ, marked in both rows.
    const marked = await page.evaluate(() => ['#tokens', '#tokens-b'].map((row) =>
      [...document.querySelectorAll(row + ' .chip')].filter((c) => c.classList.contains('differs')).map((c) => Number(c.dataset.position))));
    const textA = lossPrompt + target, textB = promptB + target;  // a char-level model: one token a character
    for (const [name, own, other, got] of [['A', textA, textB, marked[0]], ['B', textB, textA, marked[1]]]) {
      const want = [...own].map((character, i) => (character !== other[i] ? i : -1)).filter((i) => i >= 0);
      if (got.join() !== want.join()) fail(`compare mode: ${name}'s tokens marked as differing: ${got}, expected ${want}`);
    }

    // The next tokens of both side by side: p(A), p(B) and the change, as the two responses say.
    const rows = await page.$$eval('#compare-predictions tr[data-id]', (all) => all.map((r) =>
      ({id: Number(r.dataset.id), a: r.dataset.a, b: r.dataset.b, change: r.dataset.change, text: r.lastChild.textContent})));
    const sent = await page.evaluate(() => {
      const {response, compare, position} = window.explainState;
      const top = (r, p) => r.predictions.find((e) => e.position === p).top;
      return {a: top(response, position), b: top(compare.response, Math.min(position, compare.response.tokens.length - 1))};
    });
    const ids = new Set([...sent.a, ...sent.b].map((t) => t.id));
    if (rows.length !== ids.size) fail(`compare mode: ${rows.length} next tokens listed, the two top lists hold ${ids.size}`);
    for (const row of rows) {
      const [pa, pb] = [sent.a, sent.b].map((top) => top.find((t) => t.id === row.id));
      if (String(pa ? pa.probability : '') !== row.a || String(pb ? pb.probability : '') !== row.b) {
        fail(`compare mode: token ${row.id} listed with p(A) ${row.a}, p(B) ${row.b}; the responses: ${pa && pa.probability}, ${pb && pb.probability}`);
      } else if (pa && pb && (Number(row.change) !== pb.probability - pa.probability ||
                              Number(row.text) !== Number((pb.probability - pa.probability).toFixed(4)))) {
        fail(`compare mode: token ${row.id}'s change is ${row.change} ('${row.text}'), p(B) − p(A) is ${pb.probability - pa.probability}`);
      }
    }
    if (!rows.some((row) => row.change !== undefined)) fail('compare mode: no token is in both top lists: no change shown');

    // Prompt B's loss and "why this token" beside A's: unpinned, both are about their prompt's last
    // token, as tinygpt explain prints them.
    await page.click(`#tokens .chip[data-position="${pinned}"]`);
    if (!await settled([lossPrompt.length - 1, promptB.length - 1])) {
      fail(`compare mode, unpinned: "why" is about positions ${await attributions()}, not each prompt's last`);
    } else {
      const textB = explainText(promptB, {layer: lastLayer, target});
      const lossB = /^ {2}loss (\S+) \(mean cross-entropy, nats\) {3}perplexity (\S+)$/m.exec(textB);
      const shownB = await page.evaluate(() => ({
        hidden: document.getElementById('loss-b-figures').hidden,
        loss: Number(document.getElementById('loss-b').dataset.value),
        lossA: Number(document.getElementById('loss').dataset.value),
        change: document.getElementById('loss-change').textContent,
        titles: [document.getElementById('why-title').textContent, document.getElementById('why-title-b').textContent],
        rows: [...document.querySelectorAll('#why-b .bar-row')].map((r) => [Number(r.dataset.position), Number(r.dataset.score)]),
      }));
      if (shownB.hidden || !lossB || !(Math.abs(shownB.loss - Number(lossB[1])) <= halfUnit(Number(lossB[1]), 4))) {
        fail(`compare mode: B's loss shown ${shownB.hidden ? 'nowhere' : shownB.loss}, tinygpt explain prints ${lossB && lossB[1]}`);
      }
      const change = shownB.loss - shownB.lossA;
      if (shownB.change !== '(B − A: ' + (change >= 0 ? '+' : '−') + Math.abs(change).toFixed(4) + ')') {
        fail(`compare mode: the loss's change reads '${shownB.change}' for B ${shownB.loss} and A ${shownB.lossA}`);
      }
      if (!shownB.titles[0].startsWith('A: why ') || !shownB.titles[1].startsWith('B: why ')) {
        fail(`compare mode: the "why" titles are ${JSON.stringify(shownB.titles)}`);
      }
      const whyB = [...textB.slice(textB.indexOf('=== Why')).split('\n\n')[0].matchAll(/^ +(\d+) '.*?' +(\S+)/gm)]
        .map((m) => [Number(m[1]), Number(m[2])]);
      if (whyB.length === 0 || whyB.length !== shownB.rows.length) {
        fail(`compare mode: ${shownB.rows.length} attribution rows of B shown, tinygpt explain prints ${whyB.length}`);
      }
      whyB.forEach(([position, score], i) => {
        const [gotPosition, got] = shownB.rows[i] || [];
        if (gotPosition !== position || !(Math.abs(got - score) <= (Math.abs(score) < 1e-4 && score !== 0
          ? halfUnit(score, 2) * 1.01 : 5e-5 + 1e-6))) {
          fail(`compare mode: B's attribution ${i}: the page has position ${gotPosition} ${got}, tinygpt explain prints ${position} ${score}`);
        }
      });
    }
    // A token of B pins its position in both prompts; one A lacks cannot be pinned.
    await page.click(`#tokens-b .chip[data-position="${pinned}"]`);
    if (!await settled([pinned, pinned])) fail(`compare mode: B's token ${pinned} clicked: "why" is about ${await attributions()}`);
    const pressed = await page.$eval(`#tokens .chip[data-position="${pinned}"]`, (c) => c.getAttribute('aria-pressed'));
    if (pressed !== 'true') fail(`compare mode: B's token ${pinned} clicked, A's is not shown pinned`);
    const beyondA = await page.$$eval('#tokens-b .chip', (all, countA) =>
      all.filter((c) => Number(c.dataset.position) >= countA).map((c) => c.tagName), tokensA);
    if (tokensB > tokensA && (beyondA.length !== tokensB - tokensA || beyondA.some((tag) => tag === 'BUTTON'))) {
      fail(`compare mode: B's tokens past A's end are ${JSON.stringify(beyondA)}, not plain labels`);
    }

    // The gradients of both prompts compare too: A's, B's and B − A's dLoss/dweights per head.
    await page.select('#show', 'gradients');
    const drawn = await page.waitForFunction((id) => document.querySelectorAll(`canvas.heatmap[data-stage="${id}"][data-showing="gradients"]`).length,
                                             {timeout: 30000}, weightsId).then((count) => count.jsonValue()).catch(() => 0);
    if (drawn !== 3 * config.n_head) fail(`compare mode: ${drawn} gradient heatmaps of ${weightsId}, expected ${3 * config.n_head}`);
    await page.select('#show', 'values');
  }

  for (const [width, height] of [[1400, 900], [360, 800]]) {
    await page.setViewport({width, height});
    await page.mouse.move(1, 1);
    for (const problem of await layoutProblems(page, layoutSelector, unboxed)) fail(`compare mode at ${width} px: ${problem}`);
    await page.screenshot({path: path.join(scratch, `explain-compare-${width}.png`), fullPage: true});
  }

  // The address fills the fields (tinygpt explain --serve prints one): prompt, target, block, prompt B.
  await page.setViewport({width: 1400, height: 900});
  const asked = {prompt: 'To be', target: ' or', layer: lastLayer, compare: 'To go'};
  await page.goto(baseUrl + '/explain?' + new URLSearchParams({...asked, layer: String(lastLayer)}), {waitUntil: 'load'});
  if (await waitFor(asked, 'fields from the address')) {
    const fields = await page.evaluate(() => ['prompt', 'target', 'layer', 'prompt-b'].map((id) => document.getElementById(id).value)
      .concat(document.getElementById('compare').checked));
    const want = [asked.prompt, asked.target, String(lastLayer), asked.compare, true];
    if (fields.join('|') !== want.join('|')) fail(`the fields from the address: ${JSON.stringify(fields)}, expected ${JSON.stringify(want)}`);
  }

  // The key is kept in the browser: a reload has it.
  await page.reload({waitUntil: 'load'});
  if (await page.$eval('#api-key', (input) => input.value) !== apiKey) fail('the API key is not kept across a reload');

  const errors = await page.evaluate(() => document.body.dataset.errors);
  if (errors !== '') fail('script errors: ' + errors);
} finally {
  await browser.close();
}
if (failures > 0) process.exit(1);
console.log('the step-through page: every check passed');
