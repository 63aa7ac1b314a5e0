// The Anthropic TypeScript SDK's own tool runner, with its defaults (message threads on), against a toolslip
// serve: node tool_runner.mjs BASE_URL whole|streamed. Prints {"text", "sent"}: the final answer's text and
// every request body the SDK sent, so a test sees whether the loop was threaded.
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';

const [base, mode] = process.argv.slice(2);
const sent = [];
const client = new Anthropic({
  baseURL: base,
  apiKey: 'x',
  maxRetries: 0,
  fetch: async (url, init) => {
    sent.push(JSON.parse(init.body));
    return fetch(url, init);
  },
});

const getWeather = betaTool({
  name: 'get_weather',
  description: "Current weather of a city.",
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string', description: "The city's name." } },
    required: ['city'],
  },
  run: async ({ city }) => JSON.stringify({ city, temp: 28, unit: 'celsius', desc: 'cloudy' }),
});

const stream = mode === 'streamed';
const runner = client.beta.messages.toolRunner({
  model: 'm',
  max_tokens: 80,
  system: 'You answer weather questions with the get_weather tool.',
  tools: [getWeather],
  messages: [{ role: 'user', content: "What's the weather in Beijing?" }],
  max_iterations: 4,
  stream,
});
if (stream) {
  for await (const turn of runner) {
    for await (const _event of turn) {
      // each turn's events are read as they come, as a streaming loop does
    }
  }
}
const final = await runner.runUntilDone();
const text = final.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
process.stdout.write(JSON.stringify({ text, sent }));
