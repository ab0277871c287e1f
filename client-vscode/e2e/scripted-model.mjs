// A scripted OpenAI-compatible chat server on 127.0.0.1 for the end-to-end test.
// POST /v1/chat/completions answers each request with the next turn of a script, streamed as
// SSE when the request asks for it; GET /v1/models lists the one model. Every request is kept.
//
// A turn: {content?: string, tool_calls?: [{name, arguments}], requires?: [string],
// delayMs?: number}. `delayMs` holds the answer back (a model that takes its time). `requires`
// lists texts the request's messages must hold (an earlier turn of the conversation, say); when
// one is missing the answer says so instead and the miss is kept in `missing`. When the script
// runs out the server answers with `fallback` (a plain final answer), so a run always ends.
// `answerNext(turn)` puts a turn before the rest, for a step whose request comes at a moment
// the script cannot count on (after runs that may have ended on `fallback`). `intercept(body)`
// answers a request outside the script when it returns a turn (a connection test, say); such
// requests are kept in `intercepted`, not `requests`.
// `port` listens on that port of 127.0.0.1 instead of a free one.
import http from 'node:http';

/** Start the server; resolves to {baseUrl, requests, close()}. */
export function startScriptedModel(
  script,
  { model = 'scripted-model', fallback = { content: 'Done.' }, port = 0, intercept = () => undefined } = {},
) {
  const requests = [];
  const intercepted = [];
  const missing = [];
  let turn = 0;
  let callCounter = 0;
  const next = [];

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      if (req.method === 'GET' && /\/models\/?$/.test(req.url)) {
        sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', owned_by: 'tests' }] });
        return;
      }
      if (req.method !== 'POST' || !/\/chat\/completions\/?$/.test(req.url)) {
        sendJson(res, 404, { error: { message: `not found: ${req.method} ${req.url}` } });
        return;
      }
      let body;
      try {
        body = JSON.parse(raw || '{}');
      } catch (error) {
        sendJson(res, 400, { error: { message: `bad JSON: ${error.message}` } });
        return;
      }
      // An intercepted request is kept apart: the script and its requests stay in step.
      let entry = intercept(body);
      if (entry) {
        intercepted.push({ headers: req.headers, body });
      } else {
        requests.push({ headers: req.headers, body });
        entry = next.length ? next.shift() : turn < script.length ? script[turn] : fallback;
        turn += 1;
      }
      const seen = JSON.stringify(body.messages ?? []);
      const absent = (entry.requires ?? []).filter((text) => !seen.includes(text));
      if (absent.length) {
        missing.push({ turn, absent });
        entry = { content: `The request lacks the earlier conversation: ${absent.join('; ')}` };
      }
      const calls = (entry.tool_calls ?? []).map((call) => ({
        id: `call_${++callCounter}`,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) },
      }));
      const answer = () => (body.stream ? stream(res, body.model ?? model, entry.content ?? '', calls) : complete());
      const complete = () =>
        sendJson(res, 200, {
          id: `chatcmpl-${turn}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model ?? model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: entry.content ?? (calls.length ? null : ''), ...(calls.length ? { tool_calls: calls } : {}) },
              finish_reason: calls.length ? 'tool_calls' : 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        });
      if (entry.delayMs) {
        setTimeout(answer, entry.delayMs);
      } else {
        answer();
      }
    });
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        requests,
        /** The requests `intercept` answered, outside the script. */
        intercepted,
        /** Turns whose request lacked a text the script requires: [{turn, absent}]. */
        missing,
        /** How many turns of the script have been served. */
        served: () => turn,
        /** Answer the next request with `entry`, whatever the script's position. */
        answerNext: (entry) => next.push(entry),
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

function sendJson(res, status, payload) {
  const data = JSON.stringify(payload);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

function stream(res, model, content, calls) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const send = (delta, finish = null) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
    );
  send({ role: 'assistant', content: '' });
  for (let i = 0; i < content.length; i += 12) {
    send({ content: content.slice(i, i + 12) });
  }
  calls.forEach((call, index) => {
    // Like real servers: the name first, then the arguments in pieces.
    send({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
    const args = call.function.arguments;
    for (let i = 0; i < args.length; i += 40) {
      send({ tool_calls: [{ index, function: { arguments: args.slice(i, i + 40) } }] });
    }
  });
  send({}, calls.length ? 'tool_calls' : 'stop');
  res.write('data: [DONE]\n\n');
  res.end();
}
