// Load on a running `tinygpt serve`: for each number of clients in a list, that
// many clients at once each send REQUESTS streamed completions one after another,
// prompts and max_tokens mixed; then one table row per level. Node's own fetch
// only (Node 18+), no packages. bench/run_serve_load.sh starts a server and runs it.
//
// usage: node bench/serve_load.mjs --url http://127.0.0.1:PORT [--clients 1,2,4,8,16,32]
//          [--requests 10] [--prompt-words 8,64,256] [--max-tokens 16,64,128]
//          [--endpoint completions|chat] [--api-key KEY] [--check]
//   --check: exit 1 if any request failed (the CLI test's use), after the table.
//
// Per request: TTFT, the time from sending it to its first token; TPOT, the time
// per output token after the first ((latency - TTFT) / (tokens - 1), latency
// ending at the stream's data: [DONE]); tokens are
// the usage of the final chunk (stream_options.include_usage), else the chunks
// counted. A level's output tokens/s is all its requests' tokens over its wall
// time, and "vs 1 client" that rate over the 1-client level's.
import fs from 'node:fs';
import os from 'node:os';
import {parseArgs} from 'node:util';

const {values: options} = parseArgs({options: {
  url: {type: 'string'},
  clients: {type: 'string', default: '1,2,4,8,16,32'},
  requests: {type: 'string', default: '10'},
  'prompt-words': {type: 'string', default: '8,64,256'},
  'max-tokens': {type: 'string', default: '16,64,128'},
  endpoint: {type: 'string', default: 'completions'},
  'api-key': {type: 'string', default: ''},
  check: {type: 'boolean', default: false},
}});
const numbers = (text, flag) => text.split(',').map((item) => {
  const value = Number(item);
  if (!Number.isInteger(value) || value < 1) throw new Error(`serve_load: --${flag} takes positive integers, got '${text}'`);
  return value;
});
if (!options.url) throw new Error('serve_load: --url http://HOST:PORT is required');
if (!['completions', 'chat'].includes(options.endpoint)) throw new Error('serve_load: --endpoint is completions or chat');
const levels = numbers(options.clients, 'clients');
const [requestsPerClient] = numbers(options.requests, 'requests');
const promptWords = numbers(options['prompt-words'], 'prompt-words');
const maxTokens = numbers(options['max-tokens'], 'max-tokens');
const path = options.endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions';

// Prompts of the same words for every run, so that levels and runs compare like with like.
const vocabulary = ('the a of to and in that it was for on are as with his they at be this from have or by one had ' +
                    'not but what all were when we there can an your which their said if do will each about how up').split(' ');
function promptOf(words, salt) {
  return Array.from({length: words}, (_, i) => vocabulary[(i * 7 + salt * 13) % vocabulary.length]).join(' ');
}

// Request `index` of a level: prompt length and max_tokens cycle through their lists
// out of step (coprime steps), so every level mixes long and short of both.
function requestBody(index) {
  const words = promptWords[index % promptWords.length];
  const body = {
    max_tokens: maxTokens[Math.floor(index / promptWords.length) % maxTokens.length],
    temperature: 0.8,
    seed: index,
    stream: true,
    stream_options: {include_usage: true},
  };
  if (options.endpoint === 'chat') body.messages = [{role: 'user', content: promptOf(words, index)}];
  else body.prompt = promptOf(words, index);
  return body;
}

// Server-sent events' data from a fetch body.
async function* serverSentEvents(body) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, {stream: true}).replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const data = buffer.slice(0, end).split('\n').filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, '')).join('\n');
      buffer = buffer.slice(end + 2);
      if (data) yield data;
    }
  }
}

// One streamed request: {ttft, tpot, tokens} in ms and tokens, or {error}.
async function timedRequest(index) {
  const headers = {'Content-Type': 'application/json'};
  if (options['api-key']) headers.Authorization = 'Bearer ' + options['api-key'];
  const sent = performance.now();
  let first = null, chunks = 0, usage = null;
  try {
    const response = await fetch(options.url + path, {method: 'POST', headers, body: JSON.stringify(requestBody(index))});
    if (!response.ok) {
      const text = await response.text();
      let message = text;
      try { message = JSON.parse(text).error.message; } catch { /* not OpenAI's error shape: the text as it is */ }
      return {error: `HTTP ${response.status}: ${message}`};
    }
    for await (const data of serverSentEvents(response.body)) {
      if (data === '[DONE]') {
        const tokens = usage ? usage.completion_tokens : chunks;
        return {ttft: first === null ? null : first - sent, tpot: tokens > 1 ? (performance.now() - first) / (tokens - 1) : null, tokens};
      }
      const chunk = JSON.parse(data);
      if (chunk.error) return {error: 'in the stream: ' + chunk.error.message};
      if (chunk.usage) usage = chunk.usage;
      const choice = (chunk.choices || [])[0];
      const text = choice && (options.endpoint === 'chat' ? choice.delta && choice.delta.content : choice.text);
      if (!text) continue;
      if (first === null) first = performance.now();
      chunks++;
    }
    return {error: 'the stream ended without data: [DONE]'};
  } catch (error) {
    return {error: error.cause ? `${error.message} (${error.cause.message || error.cause})` : error.message};
  }
}

// `clients` clients at once, each sending its requests one after another.
async function runLevel(clients) {
  const started = performance.now();
  const results = await Promise.all(Array.from({length: clients}, async (_, client) => {
    const mine = [];
    for (let request = 0; request < requestsPerClient; request++) mine.push(await timedRequest(client * requestsPerClient + request));
    return mine;
  }));
  return {clients, results: results.flat(), seconds: (performance.now() - started) / 1000};
}

// The nearest-rank percentile of the values present.
function percentile(values, fraction) {
  const sorted = values.filter((value) => value !== null).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] : null;
}

const cpu = (fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) || [, 'unknown'])[1];
console.log(`cpu: ${cpu} (${os.availableParallelism()} cores seen)`);
console.log(`server: ${options.url}, POST ${path}, streamed; ${requestsPerClient} requests per client; ` +
            `prompts of ${promptWords.join('/')} words, max_tokens ${maxTokens.join('/')}`);
// One request first, so that the first level does not pay for the server's first touch of its memory.
await timedRequest(0);

const columns = ['clients', 'requests', 'failures', 'TTFT p50 ms', 'TTFT p99 ms', 'TPOT p50 ms', 'TPOT p99 ms', 'output tok/s', 'vs 1 client'];
console.log(columns.join('  '));
const format = (value, digits = 1) => (value === null ? '-' : value.toFixed(digits));
const failures = new Map();  // message -> count
let oneClientRate = null;
for (const clients of levels) {
  const level = await runLevel(clients);
  const done = level.results.filter((result) => !result.error);
  for (const result of level.results.filter((result) => result.error)) failures.set(result.error, (failures.get(result.error) || 0) + 1);
  const rate = done.reduce((sum, result) => sum + result.tokens, 0) / level.seconds;
  if (clients === 1) oneClientRate = rate;
  const row = [clients, level.results.length, level.results.length - done.length,
               format(percentile(done.map((r) => r.ttft), 0.5)), format(percentile(done.map((r) => r.ttft), 0.99)),
               format(percentile(done.map((r) => r.tpot), 0.5), 2), format(percentile(done.map((r) => r.tpot), 0.99), 2),
               format(rate), oneClientRate ? format(rate / oneClientRate, 2) + 'x' : '-'];
  console.log(row.map((cell, i) => String(cell).padStart(columns[i].length)).join('  '));
}
for (const [message, count] of failures) console.log(`failed ${count}x: ${message}`);
if (options.check && failures.size > 0) process.exit(1);
