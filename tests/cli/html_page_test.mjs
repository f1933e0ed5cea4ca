// `tinygpt explain --html`'s page in headless Chromium (puppeteer-core from build/npm), run by
// tests/cli/test_html_report.sh on pages it wrote: every page loads with no script error and
// no request, its own check finds every stage shown, and at 1400 px nothing overlaps or
// overflows (the heatmaps scroll in their boxes instead). On the page of a 100-token prompt
// with --layer: every heatmap of the block has all 100 positions, and the cell under the
// pointer holds (in its <title>) exactly the float32 that `explain --json` gives; every token
// with a space shows it as '␣'; the GELU legend's box is clear of the curve and its points;
// the block diagram's links each lead to a section, and clicking one goes there.
//
// usage: node html_page_test.mjs SCRATCH_DIR PAGE:STAGES... LONG_PAGE LONG_JSON POSITIONS
//   PAGE:STAGES: a page and the number of stage sections it has; LONG_PAGE (with LONG_JSON,
//   the same walk-through as `explain --json`) shows one block at POSITIONS positions.
//   Prints one "FAIL: ..." line per failed check on stderr, exits 1 if any.
import fs from 'node:fs';
import path from 'node:path';

import {launchChromium, layoutProblems, watchPage} from './serve/browser_checks.mjs';

const args = process.argv.slice(2);
const [scratch, ...rest] = args;
const positions = Number(rest.pop()), longJson = rest.pop(), longPage = rest.pop();
const pages = rest.map((spec) => ({file: spec.slice(0, spec.lastIndexOf(':')), stages: spec.slice(spec.lastIndexOf(':') + 1)}));
if (!scratch || !longPage || !positions) throw new Error('usage: node html_page_test.mjs SCRATCH PAGE:STAGES... LONG_PAGE LONG_JSON POSITIONS');

let failures = 0;
function fail(message) {
  console.error('FAIL: ' + message);
  failures++;
}

// What is checked for overlaps: the page's blocks of text, the diagram's boxes and words, the pictures.
const LAYOUT = 'h1, h2, p, pre, table, nav#contents a, #diagram a, #diagram svg text, .pictures > svg, .scroll';
const DRAWN = ['INPUT', 'TEXTAREA', 'SCRIPT', 'text'];  // an SVG <text> is drawn where it is put, it has no box

async function open(browser, file, width) {
  const page = await browser.newPage();
  await page.setViewport({width, height: 900});
  watchPage(page, 'null', (message) => fail(`${path.basename(file)}: ${message}`));  // a file: URL's origin
  await page.goto('file://' + file, {waitUntil: 'load'});
  await page.waitForFunction(() => document.body.dataset.rendered !== 'pending', {timeout: 20000});
  return page;
}

// The page's own check, the layout, the tokens, the GELU legend.
async function checkPage(browser, {file, stages}) {
  const name = path.basename(file);
  const page = await open(browser, file, 1400);
  const {rendered, errors} = await page.evaluate(() => ({...document.body.dataset}));
  if (rendered !== stages) fail(`${name}: the page's check says '${rendered}', expected ${stages} stages`);
  if (errors) fail(`${name}: script errors: ${errors}`);
  for (const problem of await layoutProblems(page, LAYOUT, DRAWN)) fail(`${name} at 1400 px: ${problem}`);

  const blankTokens = await page.evaluate(() => [...document.querySelectorAll('.token')]
    .filter((token) => token.textContent.trim() === '' || token.textContent.includes(' ')).length);
  if (blankTokens) fail(`${name}: ${blankTokens} token cells with a blank space (a space shows as '␣')`);
  const spaceTokens = await page.evaluate(() => [...document.querySelectorAll('.token')]
    .filter((token) => token.textContent.includes('␣')).length);
  if (spaceTokens === 0) fail(`${name}: no token shows a space as '␣' (the prompt has spaces)`);

  // The legend's box against every point of the chart: the curve's line and the inputs' dots.
  const legendClashes = await page.evaluate(() => {
    const clashes = [];
    for (const chart of document.querySelectorAll('section.stage svg')) {
      const legend = chart.querySelector('g.legend');
      if (!legend) continue;
      const box = legend.getBoundingClientRect();
      for (const point of chart.querySelectorAll('circle, polyline')) {
        if (legend.contains(point)) continue;
        const at = point.getBoundingClientRect();
        if (at.bottom > box.top && at.top < box.bottom && at.right > box.left && at.left < box.right)
          clashes.push(chart.closest('section').id);
      }
    }
    return [...new Set(clashes)];
  });
  if (legendClashes.length) fail(`${name}: a chart's legend covers its points in ${legendClashes.join(', ')}`);
  const legends = await page.evaluate(() => [document.querySelectorAll('section.stage g.legend').length,
                                               document.querySelectorAll('section[id$=".gelu"], section[id$=".relu2"]').length]);
  if (legends[0] !== legends[1]) fail(`${name}: ${legends[0]} activation charts with a legend for ${legends[1]} activations`);

  // Every link of the diagram leads to an element of the page; a box clicked goes to its stage.
  const dangling = await page.evaluate(() => [...document.querySelectorAll('#diagram a')]
    .map((link) => link.getAttribute('href')).filter((href) => !href.startsWith('#') || !document.getElementById(href.slice(1))));
  if (dangling.length) fail(`${name}: diagram links lead nowhere: ${dangling.join(' ')}`);
  await page.click('#diagram a[data-stage="block0.weights"]');
  await page.waitForFunction(() => location.hash === '#block0.weights', {timeout: 5000})
    .catch(() => fail(`${name}: clicking the diagram's weights box did not go to #block0.weights`));
  const top = await page.evaluate(() => document.getElementById('block0.weights').getBoundingClientRect().top);
  if (!(top >= 0 && top < 200)) fail(`${name}: after the click block0.weights is at ${top} px, not at the top`);
  await page.screenshot({path: path.join(scratch, name + '.png')});
  await page.close();
}

// The float32 values of a stage's tensor labelled `label` in the JSON of `explain --json`.
function jsonTensor(walkthrough, id, label) {
  const stage = walkthrough.stages.find((one) => one.id === id);
  const tensor = stage.tensors.find((one) => one.label === label);
  const bytes = Buffer.from(tensor.f32, 'base64');
  return {shape: tensor.shape, values: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)};
}

// The long prompt's block: every position in every heatmap, the value under the pointer.
async function checkLongPage(browser) {
  const name = path.basename(longPage);
  const walkthrough = JSON.parse(fs.readFileSync(longJson, 'utf8'));
  const block = walkthrough.stages.find((stage) => stage.id.endsWith('.weights')).id.split('.')[0];
  const page = await open(browser, longPage, 1400);
  for (const problem of await layoutProblems(page, LAYOUT, DRAWN)) fail(`${name} at 1400 px: ${problem}`);
  const cut = await page.evaluate(() => document.querySelectorAll('.cut').length);
  if (cut) fail(`${name}: one block of ${walkthrough.tokens.length} positions should not be cut`);
  for (const stage of ['scores', 'mask', 'weights']) {
    const id = `${block}.${stage}`;
    const rows = await page.evaluate((id) => [...document.getElementById(id).querySelectorAll('.scroll svg')].map((svg) => {
      const titles = [...svg.querySelectorAll('title')].map((title) => title.textContent);
      const keys = new Set(titles.map((title) => title.match(/key (\d+)/)[1]));
      return {titles: titles.length, keys: keys.size};
    }), id);
    const heads = jsonTensor(walkthrough, id, 'head 0').shape[0] === positions ? rows.length : -1;
    if (rows.length === 0 || heads < 0) fail(`${id}: no heatmaps, or not ${positions} positions`);
    for (const [head, {keys}] of rows.entries())
      if (keys !== positions) fail(`${id} head ${head}: ${keys} positions, expected ${positions}`);
  }
  // Hover the weights of head 1 at a few cells: the element under the pointer carries the JSON's value.
  const weights = jsonTensor(walkthrough, `${block}.weights`, 'head 1');
  for (const [query, key] of [[0, 0], [positions - 1, 0], [positions - 1, positions - 1], [57, 13]]) {
    const found = await page.evaluate((id, query, key) => {
      const svg = document.getElementById(id).querySelectorAll('.scroll svg')[1];
      const cell = [...svg.querySelectorAll('title')].find((title) => title.textContent.startsWith(`query ${query}, key ${key}:`));
      if (!cell) return null;
      cell.parentElement.scrollIntoView({block: 'center', inline: 'center'});
      const box = cell.parentElement.getBoundingClientRect();
      const under = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      const title = under && under.querySelector('title');
      return title ? title.textContent : 'nothing with a title under the pointer';
    }, `${block}.weights`, query, key);
    const expected = weights.values[query * positions + key];
    const shown = found && Number(found.slice(found.indexOf(': ') + 2));
    if (!found || !found.startsWith(`query ${query}, key ${key}: `) || Math.fround(shown) !== expected)
      fail(`${block}.weights head 1 (${query}, ${key}): the pointer finds '${found}', explain --json gives ${expected}`);
  }
  // In a narrow window a heatmap of 100 positions scrolls in its box; the page itself does not.
  await page.setViewport({width: 600, height: 900});
  const narrow = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth - innerWidth,
    scrolling: [...document.querySelectorAll('.scroll')].filter((box) => box.scrollWidth > box.clientWidth + 1).length,
  }));
  if (narrow.page > 0) fail(`${name} at 600 px: the page is ${narrow.page} px wider than the window`);
  if (narrow.scrolling === 0) fail(`${name} at 600 px: no heatmap scrolls in its box`);
  await page.close();
}

const browser = await launchChromium();
try {
  for (const spec of pages) await checkPage(browser, spec);
  await checkLongPage(browser);
} catch (error) {
  fail('the browser check stopped: ' + error.stack);
} finally {
  await browser.close();
}
process.exit(failures ? 1 : 0);
