// A Node test of an agent's model calls, against `agentreplay serve --fake`.
// Node 20's own fetch: no npm package. Start the fake first, and give this its URL:
//
//   agentreplay serve --fake            # the first line it prints is the URL
//   AGENTREPLAY_URL=http://127.0.0.1:PORT node serve_fake.mjs
import assert from "node:assert/strict";

const url = process.env.AGENTREPLAY_URL;
if (!url) throw new Error("set AGENTREPLAY_URL to the URL agentreplay serve --fake printed");

// The control API: POST /_agentreplay/<name> with a JSON body.
async function control(name, body = {}) {
  const response = await fetch(`${url}/_agentreplay/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${name}: ${answer.error.message}`);
  return answer;
}

// The agent's model call: Anthropic's Messages API, as any client sends it.
function ask(question, { stream = false } = {}) {
  return fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "sk-ant-test-key" },
    body: JSON.stringify({
      model: "claude-sonnet-4-6",
      max_tokens: 100,
      stream,
      messages: [{ role: "user", content: question }],
    }),
  });
}

// 1. Script a reply: the Reply vocabulary as JSON ("text" is Reply.text).
await control("script", { replies: ["Rain in Leeds."] });
const reply = await (await ask("Weather in Leeds?")).json();
assert.equal(reply.content[0].text, "Rain in Leeds.");

// A typo is refused, naming the field and the word it should be.
await assert.rejects(
  control("script", { replies: [{ text: "Hi", fault: { kind: "cut", after_event: 2 } }] }),
  /replies\[0\]\.fault\.after_event: unknown field; did you mean after_events\?/,
);

// 2. Cut a stream after 3 events: the connection drops mid-body.
await control("script", {
  replies: [{ text: "Showers, then sun.", fault: { kind: "cut", after_events: 3 } }],
});
const cut = await ask("And tomorrow?", { stream: true });
let received = "";
await assert.rejects(async () => {
  for await (const chunk of cut.body) received += new TextDecoder().decode(chunk);
});
assert.match(received, /event: message_start/);
assert.doesNotMatch(received, /event: message_stop/);

// A 429 for the next call only; the reply waits for the retry.
await control("script", { replies: ["After the retry."] });
await control("inject", { fault: { kind: "http", status: 429, retry_after: 1 } });
const limited = await ask("Once more?");
assert.equal(limited.status, 429);
assert.equal(limited.headers.get("retry-after"), "1");
await limited.body.cancel();
assert.equal((await (await ask("Once more?")).json()).content[0].text, "After the retry.");

// 3. Hold a call, look while it is held, then release it.
await control("script", { replies: ["Held, then sent."] });
await control("block");
const held = ask("Hold this one.").then((response) => response.json());
assert.deepEqual(await control("wait_blocked", { timeout: 30 }), { blocked: true });
await control("release");
assert.equal((await held).content[0].text, "Held, then sent.");

// 4. Read the log: every call, how it ended, who sent it; no key in it.
const log = await (await fetch(`${url}/_agentreplay/log`)).json();
assert.deepEqual(
  log.calls.map((call) => [call.outcome, call.status, call.events_sent]),
  [
    ["completed", 200, 0],
    ["cut", 200, 3],
    ["http_error", 429, 0],
    ["completed", 200, 0],
    ["completed", 200, 0],
  ],
);
assert.equal(log.calls[1].reply_text, "Showers, then sun.");
assert.equal(log.calls[0].client, "node fetch (node)");
assert.equal(log.calls[0].headers["x-api-key"], "REDACTED");
assert.equal(log.remaining, 0);

// Start over for the next test.
await control("reset");
console.log(`ok: ${log.calls.length} calls`);
