// tinygpt serve through OpenAI's own Node client (the `openai` npm package that
// scripts/setup.sh --test installs into build/npm).
//
//   node openai_client.mjs BASE_URL MODEL_ID api          completions and chat, whole and streamed, stop texts,
//                                                         seeds, refusals
//   node openai_client.mjs BASE_URL MODEL_ID key KEY      with an API key: the right one works, others are 401
//
// Exits 1 after printing each failed check on stderr.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const require = createRequire(resolve('build/npm/package.json'));
const OpenAI = require('openai');

const [baseURL, model, mode, key] = process.argv.slice(2);
let failures = 0;
const check = (condition, what) => {
  if (!condition) {
    console.error(`FAIL: ${what}`);
    failures += 1;
  }
};
const client = (apiKey = 'unused') => new OpenAI({ baseURL: `${baseURL}/v1`, apiKey, maxRetries: 0, timeout: 60000 });

// The status of the error a call throws (0 when it succeeds).
async function statusOf(call) {
  try {
    await call();
    return 0;
  } catch (error) {
    return error.status ?? -1;
  }
}

async function streamedText(stream, endpoint) {
  let text = '';
  let finish = null;
  let usage = null;
  let role = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (endpoint === 'chat') {
        role = role ?? choice.delta.role ?? null;
        text += choice.delta.content ?? '';
      } else {
        text += choice.text;
      }
      finish = choice.finish_reason ?? finish;
    }
  }
  return { text, finish, usage, role };
}

async function apiChecks() {
  const openai = client();
  const models = await openai.models.list();
  check(models.data.some((entry) => entry.id === model), `models.list has ${model}: ${JSON.stringify(models.data)}`);

  // Completions: whole and streamed greedy texts are the same.
  const request = { model, prompt: 'Hello', max_tokens: 12, temperature: 0 };
  const whole = await openai.completions.create(request);
  const text = whole.choices[0].text;
  check(typeof text === 'string' && text.length > 0, `completion text: ${JSON.stringify(whole)}`);
  check(['stop', 'length'].includes(whole.choices[0].finish_reason), `finish_reason ${whole.choices[0].finish_reason}`);
  check(whole.object === 'text_completion' && whole.id.startsWith('cmpl-'), `completion object and id: ${whole.object} ${whole.id}`);
  check(whole.usage.prompt_tokens > 0 && whole.usage.completion_tokens > 0 && whole.usage.completion_tokens <= 12 &&
          whole.usage.total_tokens === whole.usage.prompt_tokens + whole.usage.completion_tokens,
        `completion usage: ${JSON.stringify(whole.usage)}`);
  const streamed = await streamedText(await openai.completions.create({ ...request, stream: true }), 'text');
  check(streamed.text === text, `streamed completion ${JSON.stringify(streamed.text)} != whole ${JSON.stringify(text)}`);
  check(streamed.finish === whole.choices[0].finish_reason, `streamed finish ${streamed.finish}`);
  const ids = await openai.completions.create({ model, prompt: [300, 10, 11, 12], max_tokens: 3, temperature: 0 });
  check(ids.usage.prompt_tokens === 4, `a prompt of ids: ${JSON.stringify(ids.usage)}`);

  // A stop text taken from the greedy text: the reply ends before its first occurrence.
  if (text.length >= 4) {
    const stop = text.slice(2, 4);
    const expected = text.slice(0, text.indexOf(stop));
    const stopped = await openai.completions.create({ ...request, stop: [stop, '\u0000never'] });
    check(stopped.choices[0].text === expected, `stop ${JSON.stringify(stop)}: ${JSON.stringify(stopped.choices[0].text)} != ${JSON.stringify(expected)}`);
    check(stopped.choices[0].finish_reason === 'stop', `stop's finish_reason ${stopped.choices[0].finish_reason}`);
    const stoppedStream = await streamedText(await openai.completions.create({ ...request, stop, stream: true }), 'text');
    check(stoppedStream.text === expected, `streamed stop: ${JSON.stringify(stoppedStream.text)} != ${JSON.stringify(expected)}`);
    check(stoppedStream.finish === 'stop', `streamed stop's finish_reason ${stoppedStream.finish}`);
  } else {
    check(false, `the greedy text ${JSON.stringify(text)} is too short to take a stop text from`);
  }

  // Chat: whole and streamed, with the usage chunk.
  const chat = { model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi there' }],
                 max_tokens: 10, temperature: 0 };
  const answer = await openai.chat.completions.create(chat);
  const message = answer.choices[0].message;
  check(answer.object === 'chat.completion' && message.role === 'assistant' && typeof message.content === 'string',
        `chat answer: ${JSON.stringify(answer)}`);
  const chatStream = await streamedText(
    await openai.chat.completions.create({ ...chat, stream: true, stream_options: { include_usage: true } }), 'chat');
  check(chatStream.text === message.content, `streamed chat ${JSON.stringify(chatStream.text)} != ${JSON.stringify(message.content)}`);
  check(chatStream.role === 'assistant', `streamed chat's role ${chatStream.role}`);
  check(chatStream.usage && chatStream.usage.completion_tokens === answer.usage.completion_tokens,
        `streamed chat's usage ${JSON.stringify(chatStream.usage)} vs ${JSON.stringify(answer.usage)}`);
  // Sampled with a seed: the same seed, the same text.
  const seeded = { ...chat, temperature: 1.0, top_p: 0.95, seed: 42 };
  const first = await openai.chat.completions.create(seeded);
  const again = await openai.chat.completions.create(seeded);
  check(first.choices[0].message.content === again.choices[0].message.content, 'the same seed gave different texts');

  // Refusals, as the client raises them.
  check(await statusOf(() => openai.completions.create({ ...request, max_tokens: -1 })) === 400, 'max_tokens -1: not 400');
  check(await statusOf(() => openai.completions.create({ ...request, n: 2 })) === 400, 'n 2: not 400');
  check(await statusOf(() => openai.completions.create({ ...request, model: 'gpt-4' })) === 404, 'another model: not 404');
  check(await statusOf(() => openai.chat.completions.create({ ...chat, messages: [] })) === 400, 'no messages: not 400');
  try {
    await openai.completions.create({ ...request, temperature: 'hot' });
    check(false, 'temperature "hot" was accepted');
  } catch (error) {
    check(error.status === 400 && error.param === 'temperature', `temperature "hot": ${error.status} ${error.param}`);
  }
}

async function keyChecks() {
  const request = { model, prompt: 'Hello', max_tokens: 2 };
  check(await statusOf(() => client(key).completions.create(request)) === 0, 'the right key was refused');
  check(await statusOf(() => client(`${key}x`).completions.create(request)) === 401, 'a longer key: not 401');
  check(await statusOf(() => client('wrong').completions.create(request)) === 401, 'a wrong key: not 401');
  check(await statusOf(() => client(key.slice(0, -1)).models.list()) === 401, 'a key one short: not 401');
}

try {
  await (mode === 'key' ? keyChecks() : apiChecks());
} catch (error) {
  check(false, `unexpected error: ${error.stack ?? error}`);
}
process.exit(failures ? 1 : 0);
