// useChat without React: the `ai` package's own chat (AbstractChat, DefaultChatTransport) against a
// toolslip console's POST /api/chat. Sends PROMPT, answers every tool approval it is asked for (approve,
// or deny with REASON), and prints the conversation's UI messages as JSON once the chat is ready again.
// With CHAT_THEN set, it then sends that as a second turn (useChat posts the whole history, tool parts too).
//   [CHAT_THEN=TEXT] node chat.mjs URL TOKEN PROMPT approve|deny [REASON]
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";

const [url, token, prompt, verdict, reason] = process.argv.slice(2);

class State {
  constructor() { this.status = "ready"; this.error = undefined; this.messages = []; }
  pushMessage(m) { this.messages = this.messages.concat([m]); }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(i, m) { this.messages = this.messages.map((old, j) => (j === i ? m : old)); }
  snapshot(v) { return structuredClone(v); }
}

class Chat extends AbstractChat {}

const chat = new Chat({
  state: new State(),
  transport: new DefaultChatTransport({ api: `${url}/api/chat`, headers: { Authorization: `Bearer ${token}` } }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  onError: (e) => { console.error("chat error:", e.message); },
});

async function settled() {
  for (let i = 0; i < 600 && (chat.status === "submitted" || chat.status === "streaming"); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
}

const asked = [];
async function turn(text) {
  await chat.sendMessage({ text });
  await settled();
  for (let round = 0; round < 5; round++) {
    const pending = chat.messages.flatMap((m) => m.parts).filter((p) => p.state === "approval-requested");
    if (pending.length === 0) break;
    for (const part of pending) {
      asked.push({ tool: part.type, input: part.input });
      await chat.addToolApprovalResponse({ id: part.approval.id, approved: verdict === "approve", reason });
    }
    await new Promise((r) => setTimeout(r, 50));
    await settled();
  }
}

await turn(prompt);
if (process.env.CHAT_THEN) await turn(process.env.CHAT_THEN); // a follow-up turn: the whole history is sent again
console.log(JSON.stringify({ status: chat.status, error: chat.error?.message ?? null, asked, messages: chat.messages }));
