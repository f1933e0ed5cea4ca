// The chat page of `tinygpt serve` in headless Chromium, driven by puppeteer-core
// (build/npm, from scripts/setup.sh --test): run by tests/cli/test_cli_serve_page.sh
// against a server it started.
//
// usage: node chat_page_test.mjs BASE_URL API_KEY SCRATCH_DIR
//   BASE_URL: the server (http://127.0.0.1:PORT), started with --api-key API_KEY.
//   Screenshots go to SCRATCH_DIR. Prints one line per failed check on stderr, exits 1 if any.
import path from 'node:path';

import {launchChromium, layoutProblems, watchPage} from './browser_checks.mjs';

const [baseUrl, apiKey, scratch] = process.argv.slice(2);
if (!scratch) throw new Error('usage: node chat_page_test.mjs BASE_URL API_KEY SCRATCH_DIR');
const origin = new URL(baseUrl).origin;

let failures = 0;
function fail(message) {
  console.error('FAIL: ' + message);
  failures++;
}

// What the server answers to the same conversation without streaming: the reference for each reply.
async function direct(body, key = apiKey) {
  const response = await fetch(baseUrl + '/v1/chat/completions', {
    method: 'POST',
    headers: {'Content-Type': 'application/json', Authorization: 'Bearer ' + key},
    body: JSON.stringify({...body, stream: false, stream_options: undefined}),
  });
  return {status: response.status, body: await response.json()};
}

const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.setViewport({width: 1400, height: 900});
  const chatRequests = [];
  watchPage(page, origin, fail, (request) => {
    if (request.url() === baseUrl + '/v1/chat/completions') chatRequests.push(JSON.parse(request.postData()));
  });
  await page.goto(baseUrl + '/', {waitUntil: 'load'});

  // Settings: the key (the model's name needs it on this server), greedy decoding, a system message.
  await page.click('#settings summary');
  await page.type('#api-key', apiKey);
  await page.$eval('#api-key', (input) => input.dispatchEvent(new Event('change')));
  await page.$eval('#temperature', (input) => { input.value = ''; });
  await page.type('#temperature', '0');
  await page.$eval('#max-tokens', (input) => { input.value = ''; });
  await page.type('#max-tokens', '40');
  await page.type('#system', 'Be brief.');

  const models = await (await fetch(baseUrl + '/v1/models', {headers: {Authorization: 'Bearer ' + apiKey}})).json();
  const modelId = models.data[0].id;
  await page.waitForFunction((id) => document.getElementById('model').textContent === 'model: ' + id,
                             {timeout: 10000}, modelId).catch(() => {});
  const modelText = await page.$eval('#model', (label) => label.textContent);
  if (modelText !== 'model: ' + modelId) fail(`the model's name: '${modelText}', expected 'model: ${modelId}'`);

  // Each change to a reply's text while it streams, counted in the page.
  await page.evaluate(() => {
    window.replyUpdates = 0;
    new MutationObserver((records) => {
      for (const record of records) if (record.target.classList && record.target.classList.contains('content')) window.replyUpdates++;
    }).observe(document.getElementById('log'), {childList: true, subtree: true});
  });

  // sendTurn TEXT: types it (Shift+Enter between its lines), presses Enter, waits until the page is idle or shows an error.
  async function sendTurn(text) {
    await page.evaluate(() => { window.replyUpdates = 0; });
    for (const [index, line] of text.split('\n').entries()) {
      if (index > 0) {
        await page.keyboard.down('Shift');
        await page.keyboard.press('Enter');
        await page.keyboard.up('Shift');
      }
      await page.type('#prompt', line);
    }
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.body.dataset.state !== 'streaming' &&
                                     document.querySelector('#send').disabled === false, {timeout: 60000});
  }

  for (const [turn, text] of ['Hello there', 'Tell me\nmore'].entries()) {
    const requestsBefore = chatRequests.length;
    await sendTurn(text);
    const state = await page.evaluate(() => document.body.dataset.state);
    if (state !== 'idle') {
      fail(`turn ${turn + 1}: the page's state is '${state}': ${await page.$eval('#log', (log) => log.innerText)}`);
      continue;
    }
    if (chatRequests.length !== requestsBefore + 1) { fail(`turn ${turn + 1}: ${chatRequests.length - requestsBefore} requests`); continue; }
    const sent = chatRequests.at(-1);
    if (sent.stream !== true || sent.temperature !== 0 || sent.max_tokens !== 40 || sent.model !== modelId) {
      fail(`turn ${turn + 1}: the request's settings: ${JSON.stringify(sent)}`);
    }
    // The whole conversation each turn: the system message, then user and assistant in turn.
    const roles = sent.messages.map((message) => message.role).join(',');
    const expectedRoles = ['system', 'user', 'assistant', 'user'].slice(0, 2 + 2 * turn).join(',');
    if (roles !== expectedRoles) fail(`turn ${turn + 1}: the messages' roles are ${roles}, expected ${expectedRoles}`);
    if (sent.messages.at(-1).content !== text) fail(`turn ${turn + 1}: the last message is ${JSON.stringify(sent.messages.at(-1))}`);

    const replies = await page.$$eval('.message.assistant .content', (contents) => contents.map((content) => content.textContent));
    const shown = replies.at(-1);
    if (replies.length !== turn + 1) fail(`turn ${turn + 1}: ${replies.length} replies shown`);
    if (turn === 1 && sent.messages[2].content !== replies[0]) fail('turn 2: the first reply was not sent back as it was shown');
    const updates = await page.evaluate(() => window.replyUpdates);
    if (updates < 2) fail(`turn ${turn + 1}: the reply came in ${updates} update(s), not streamed`);
    const reference = await direct(sent);
    const expected = reference.body.choices?.[0]?.message?.content;
    if (shown !== expected) fail(`turn ${turn + 1}: the page shows ${JSON.stringify(shown)}, the same request without streaming gives ${JSON.stringify(expected)}`);

    const figures = await page.$$eval('.message.assistant .figures', (lines) => lines.map((line) => line.textContent));
    const match = /^(\d+) tokens? · (\d+) ms to first token · ([\d.]+) tokens\/s/.exec(figures.at(-1) || '');
    if (!match) fail(`turn ${turn + 1}: no figures under the reply: ${JSON.stringify(figures.at(-1))}`);
    else if (reference.body.usage && Number(match[1]) !== reference.body.usage.completion_tokens) {
      fail(`turn ${turn + 1}: the figures say ${match[1]} tokens, the server's usage ${reference.body.usage.completion_tokens}`);
    }
  }

  // An error from the server, shown as its message; the failed turn is taken back into the box.
  await page.$eval('#api-key', (input) => { input.value = ''; });
  await page.type('#api-key', 'wrong-key');
  await sendTurn('And then?');
  const refusal = await direct(chatRequests.at(-1), 'wrong-key');
  const shownError = await page.$eval('.message.error', (box) => box.textContent).catch(() => '');
  const state = await page.evaluate(() => document.body.dataset.state);
  if (refusal.status !== 401) fail(`a wrong key: HTTP ${refusal.status}, expected 401`);
  if (state !== 'error') fail(`a wrong key: the page's state is '${state}', expected 'error'`);
  if (!refusal.body.error || !shownError.includes(refusal.body.error.message)) {
    fail(`a wrong key: the page shows '${shownError}', the server said ${JSON.stringify(refusal.body)}`);
  }
  if (await page.$eval('#prompt', (box) => box.value) !== 'And then?') fail('a wrong key: the message was not returned to the box');
  if ((await page.$$('.message.assistant')).length !== 2) fail('a wrong key: the conversation lost or gained a reply');

  // A request the server refuses by its field: max_tokens beyond what it allows.
  await page.$eval('#api-key', (input) => { input.value = ''; });
  await page.type('#api-key', apiKey);
  await page.$eval('#max-tokens', (input) => { input.value = ''; });
  await page.type('#max-tokens', '1000000');
  await page.$eval('#prompt', (box) => { box.value = ''; });
  await sendTurn('And then?');
  const tooMany = await direct(chatRequests.at(-1));
  const shownErrors = await page.$$eval('.message.error', (boxes) => boxes.map((box) => box.textContent));
  if (tooMany.status !== 400 || !tooMany.body.error || !(shownErrors.at(-1) || '').includes(tooMany.body.error.message)) {
    fail(`max_tokens too large: the page shows '${shownErrors.at(-1)}', the server said ${tooMany.status} ${JSON.stringify(tooMany.body)}`);
  }
  await page.$eval('#max-tokens', (input) => { input.value = ''; });
  await page.type('#max-tokens', '40');
  await page.$eval('#api-key', (input) => { input.value = ''; });
  await page.type('#api-key', 'wrong-key');

  // The layout at a phone's width and a wide screen's, settings open: nothing overlaps, no text overflows.
  for (const width of [360, 1400]) {
    await page.setViewport({width, height: 800});
    const problems = await layoutProblems(
      page, '.message, .message > *, button, input, textarea, label, summary, h1, #model, #empty');
    for (const problem of problems) fail(`at ${width} px: ${problem}`);
    await page.screenshot({path: path.join(scratch, `chat-${width}.png`), fullPage: true});
  }

  // A new conversation: an empty log, and the next turn sends only itself.
  await page.$eval('#api-key', (input) => { input.value = ''; });
  await page.type('#api-key', apiKey);
  await page.click('#new-conversation');
  if ((await page.$$('.message')).length !== 0) fail('new conversation: messages are still shown');
  await page.$eval('#prompt', (box) => { box.value = ''; });
  await sendTurn('Hi again');
  const fresh = chatRequests.at(-1).messages.map((message) => message.role).join(',');
  if (fresh !== 'system,user') fail(`new conversation: the next request sends ${fresh}`);

  // Stop: the reply so far is kept, marked stopped, and sent back as it is next turn. A tiny model
  // answers faster than a click, so the page sees the stream slowed down: one event per 150 ms.
  await page.evaluate(() => {
    const realFetch = window.fetch;
    window.fetch = async (url, init) => {
      const response = await realFetch(url, init);
      if (!String(url).endsWith('/chat/completions') || !response.ok) return response;
      const events = (await response.text()).split(/(?<=\n\n)/);
      const encoder = new TextEncoder();
      const slow = new ReadableStream({
        start(controller) {
          init.signal.addEventListener('abort', () => controller.error(new DOMException('stopped', 'AbortError')));
        },
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 150));
          if (init.signal.aborted) return;
          if (events.length === 0) controller.close();
          else controller.enqueue(encoder.encode(events.shift()));
        },
      });
      return new Response(slow, {status: response.status, headers: response.headers});
    };
  });
  await page.evaluate(() => { window.replyUpdates = 0; });
  await page.type('#prompt', 'Go on');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.replyUpdates >= 2, {timeout: 30000});
  const midway = await page.evaluate(() => document.body.dataset.state);
  if (midway !== 'streaming') fail(`while a reply streams the page's state is '${midway}'`);
  await page.click('#stop');
  await page.waitForFunction(() => document.body.dataset.state !== 'streaming', {timeout: 10000});
  const stoppedSent = chatRequests.at(-1);
  const stoppedText = (await page.$$eval('.message.assistant .content', (contents) => contents.map((c) => c.textContent))).at(-1);
  const stoppedFigures = (await page.$$eval('.message.assistant .figures', (lines) => lines.map((line) => line.textContent))).at(-1);
  const whole = (await direct(stoppedSent)).body.choices?.[0]?.message?.content ?? '';
  if (!stoppedFigures || !stoppedFigures.includes('stopped')) fail(`stop: the figures do not say stopped: ${stoppedFigures}`);
  if (!(stoppedText && whole.startsWith(stoppedText) && stoppedText.length < whole.length)) {
    fail(`stop: the reply kept is ${JSON.stringify(stoppedText)}, not a beginning of ${JSON.stringify(whole)}`);
  }
  await sendTurn('Thanks');
  const afterStop = chatRequests.at(-1).messages;
  if (afterStop.at(-2).content !== stoppedText) fail('stop: the next turn does not send the stopped reply as it was shown');

  const errors = await page.evaluate(() => document.body.dataset.errors);
  if (errors !== '') fail('script errors: ' + errors);
} finally {
  await browser.close();
}
if (failures > 0) process.exit(1);
console.log('the chat page: every check passed');
