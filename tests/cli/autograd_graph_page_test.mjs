// The page of `tinygpt explain --graph` in headless Chromium (puppeteer-core from
// build/npm, scripts/setup.sh --test): run by tests/cli/test_cli_autograd_graph.sh.
// It loads from disk with no script error and no request; in each graph, stepping
// backward N times highlights the N last-created ops in turn (newest first), each
// with its gradient shown, a leaf's gradient appears once every op reading it has
// run, and Reset hides them again; at 1400 px nothing overlaps.
//
// usage: node autograd_graph_page_test.mjs PAGE.html SCRATCH_DIR
//   Prints one "FAIL: ..." line per failed check on stderr, exits 1 if any; a screenshot goes to SCRATCH_DIR.
import path from 'node:path';
import {pathToFileURL} from 'node:url';

import {launchChromium, layoutProblems, watchPage} from './serve/browser_checks.mjs';

const [pagePath, scratch] = process.argv.slice(2);
if (!scratch) throw new Error('usage: node autograd_graph_page_test.mjs PAGE.html SCRATCH_DIR');
const pageUrl = pathToFileURL(path.resolve(pagePath)).href;

let failures = 0;
function fail(message) {
  console.error('FAIL: ' + message);
  failures++;
}

const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1400, height: 900});
  // A file: page's origin is "null": any request but the page itself is a failure.
  watchPage(page, 'null', fail, (request) => {
    if (request.url() !== pageUrl) fail('the page asked for ' + request.url());
  });
  await page.goto(pageUrl, {waitUntil: 'load'});

  const graphs = await page.$$eval('section.graph', (sections) => sections.length);
  if (graphs !== 2) fail(`${graphs} graphs on the page, expected 2 (the neuron, then the block)`);

  // What the page shows of graph `g` now: the current and done ops, and each node's gradient if shown.
  const state = (g) => page.$eval(`section.graph[data-graph="${g}"]`, (section) => {
    const nodes = [...section.querySelectorAll('g.node')].map((node) => ({
      leaf: node.dataset.leaf === '1',
      sequence: Number(node.dataset.sequence),
      name: node.dataset.name,
      classes: [...node.classList],
      grad: node.querySelector('.grad-value').checkVisibility() ? node.querySelector('.grad-value').textContent : null,
      inputs: node.dataset.inputs ? node.dataset.inputs.split(',').map(Number) : [],
    }));
    return {nodes, status: section.querySelector('p.status').textContent};
  });
  const click = (g, button) => page.click(`section.graph[data-graph="${g}"] button.${button}`);

  for (const g of [0, 1]) {
    const start = await state(g);
    const ops = start.nodes.filter((node) => !node.leaf).sort((a, b) => b.sequence - a.sequence);
    if (ops.length === 0) { fail(`graph ${g}: no ops`); continue; }
    const shown = start.nodes.filter((node) => node.grad !== null).map((node) => node.name);
    if (shown.length !== 1 || shown[0] !== ops[0].name)
      fail(`graph ${g}: before any step only the output's gradient should show, not [${shown}]`);
    for (let n = 1; n <= ops.length; n++) {
      await click(g, 'step');
      const now = await state(g);
      const current = now.nodes.filter((node) => node.classes.includes('current'));
      const done = now.nodes.filter((node) => node.classes.includes('done'));
      if (current.length !== 1 || current[0].sequence !== ops[n - 1].sequence)
        fail(`graph ${g} step ${n}: highlighted ${current.map((node) => node.name)}, expected ${ops[n - 1].name}`);
      if (done.length !== n - 1) fail(`graph ${g} step ${n}: ${done.length} ops marked done, expected ${n - 1}`);
      for (const node of [...current, ...done])
        if (!node.grad || !/^grad \S/.test(node.grad)) fail(`graph ${g} step ${n}: ${node.name} shows no gradient`);
      if (!now.status.startsWith(`Step ${n} of ${ops.length}: #${ops[n - 1].sequence} `))
        fail(`graph ${g} step ${n}: status '${now.status}'`);
      // A node's gradient shows exactly when every op reading it has run.
      const ran = new Set(ops.slice(0, n).map((op) => now.nodes.findIndex((node) => node.sequence === op.sequence && !node.leaf)));
      now.nodes.forEach((node, index) => {
        const readers = now.nodes.map((reader, r) => reader.inputs.includes(index) ? r : -1).filter((r) => r >= 0);
        const complete = readers.length === 0 || readers.every((r) => ran.has(r));
        if (complete !== (node.grad !== null))
          fail(`graph ${g} step ${n}: ${node.name}'s gradient ${node.grad === null ? 'hidden' : 'shown'} with ${readers.filter((r) => ran.has(r)).length} of ${readers.length} readers run`);
      });
      if (g === 1 && n === 6) break;  // the block: six steps are enough (its whole walk is the same code)
    }
    if (g === 0) {  // the neuron: micrograd's gradients on the leaves
      const end = await state(0);
      const expected = {x1: '-1.5', w1: '1', x2: '0.5', w2: '0', b: '0.5'};
      for (const [name, grad] of Object.entries(expected)) {
        const leaf = end.nodes.find((node) => node.name === name);
        if (!leaf || leaf.grad !== 'grad ' + grad) fail(`neuron: ${name} shows '${leaf && leaf.grad}', expected 'grad ${grad}'`);
      }
      if (!end.status.includes('Done')) fail(`neuron: after the last step the status is '${end.status}'`);
    }
    await click(g, 'reset');
    const reset = await state(g);
    if (reset.nodes.some((node) => node.classes.includes('current') || node.classes.includes('done')))
      fail(`graph ${g}: Reset left highlighted nodes`);
  }

  // Play runs the neuron's whole backward by itself.
  await click(0, 'play');
  await page.waitForFunction(() => document.querySelector('section.graph[data-graph="0"] p.status').textContent.includes('Done'),
                             {timeout: 10000}).catch(() => fail('Play did not finish the neuron\'s backward'));

  for (const problem of await layoutProblems(page, 'g.node, h1, h2, p, .controls')) fail('at 1400 px: ' + problem);
  await page.screenshot({path: path.join(scratch, 'autograd-graph.png'), fullPage: false});
} finally {
  await browser.close();
}
process.exit(failures ? 1 : 0);
