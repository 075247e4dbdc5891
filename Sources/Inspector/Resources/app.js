// authsim inspector: plain JavaScript, no build step. Pushes arrive live over Server-Sent Events
// (/api/v1/events); the other pages read the JSON API (/api/v1/…).
"use strict";

const $ = (selector, root = document) => root.querySelector(selector);
const pushes = new Map();          // id → push, newest last
let selected = null;

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "class") node.className = value; else if (name.startsWith("on")) node.addEventListener(name.slice(2), value); else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(child ?? ""));
  return node;
}

async function api(path, options = {}) {
  const response = await fetch(path, { headers: { "content-type": "application/json" }, ...options });
  if (response.status === 204) return null;
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? body.error.message : response.statusText);
  return body;
}

// --- Pages -------------------------------------------------------------------------------------
// The address names the page and what is selected on it (#pushes/12, #flows/3), so a link to a push
// or a sign-in opens it, and back and forward move between them (hashchange).
const PAGES = ["pushes", "flows", "sms", "emails", "users", "devices", "faults"];
function show(page) {
  if (!PAGES.includes(page)) page = "pushes";
  for (const button of document.querySelectorAll("nav button")) {
    if (button.dataset.page === page) button.setAttribute("aria-current", "page"); else button.removeAttribute("aria-current");
  }
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== `page-${page}`;
  const hashPage = location.hash.slice(1).split("/")[0];
  if (hashPage !== page) location.hash = page;
  ({ flows: loadFlows, sms: loadSMS, emails: loadEmails, users: loadUsers, devices: loadDevices, faults: loadFaults })[page]?.();
}
function route() {
  const hash = location.hash.slice(1), slash = hash.indexOf("/");
  const page = slash < 0 ? hash : hash.slice(0, slash), id = slash < 0 ? "" : hash.slice(slash + 1);
  show(page || "pushes");
  if (id && page === "pushes" && Number(id) !== selected) select(Number(id));
  if (id && page === "flows" && Number(id) !== selectedFlow) showFlow(Number(id));
  if (id && page === "users") showUser(decodeURIComponent(id));
}
addEventListener("hashchange", route);
for (const button of document.querySelectorAll("nav button")) button.addEventListener("click", () => { location.hash = button.dataset.page; });

// --- Theme --------------------------------------------------------------------------------------
function applyTheme(theme) {
  document.documentElement.classList.toggle("dark", theme === "dark");
  document.documentElement.classList.toggle("light", theme === "light");
}
applyTheme(localStorage.getItem("theme"));
$("#theme").addEventListener("click", () => {
  const dark = document.documentElement.classList.contains("dark") ||
    (!document.documentElement.classList.contains("light") && matchMedia("(prefers-color-scheme: dark)").matches);
  const next = dark ? "light" : "dark";
  localStorage.setItem("theme", next);
  applyTheme(next);
});

// --- Pushes -------------------------------------------------------------------------------------
// One way to show a time on every page: 24-hour, to the millisecond, this browser's time zone. The
// API gives RFC 3339 text or seconds since 1970.
const time = (value) => {
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value ?? "");
  return date.toLocaleTimeString([], { hour12: false }) + "." + String(date.getMilliseconds()).padStart(3, "0");
};

function matches(push) {
  const filter = $("#push-filter").value.trim().toLowerCase();
  if (!filter) return true;
  return [push.deviceToken, push.topic, push.reason, String(push.status), push.environment, push.apnsID, push.node]
    .some((field) => (field || "").toLowerCase().includes(filter));
}

function row(push) {
  const ok = push.status === 200;
  const tr = el("tr", { tabindex: "0", "data-id": push.id, "aria-label": `push ${push.id}: ${push.status} ${push.reason || ""}` },
    el("td", {}, time(push.time)), el("td", {}, push.environment), el("td", {}, push.topic || ""),
    el("td", { title: push.deviceToken }, push.deviceToken.slice(0, 8) + "…"), el("td", {}, push.pushType || ""),
    el("td", {}, push.priority ?? ""), el("td", { class: ok ? "status-ok status" : "status-bad status" }, push.status),
    el("td", { class: ok ? "" : "reason" }, push.reason || (push.dropped ? "dropped" : "")), el("td", { title: push.apnsID }, push.apnsID.slice(0, 8)),
    el("td", { title: push.node ? `answered by ${push.node}, another receiver of the fleet` : "answered by this receiver" }, push.node || "here"));
  tr.addEventListener("click", () => select(push.id));
  tr.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(push.id); } });
  return tr;
}

// With a filter, the rows are what the server finds among every push it keeps (`?q=`), not only
// the ones this page loaded: the page loads the newest SHOWN, and a filter over those alone missed
// older pushes. New pushes that match join them live.
let searched = null;               // id → push matching the filter, newest last; null: no filter
let searchTimer = null;

function countText() {
  return searched ? `${searched.size} match${searched.size > SHOWN ? ` (newest ${SHOWN} shown)` : ""}` : `${pushes.size} in view`;
}

function renderPushes() {
  const body = $("#pushes tbody");
  body.replaceChildren(...[...(searched ?? pushes).values()].reverse().slice(0, SHOWN).map(row));
  if (selected) body.querySelector(`tr[data-id="${selected}"]`)?.classList.add("selected");
  $("#push-count").textContent = countText();
}

async function search() {
  const filter = $("#push-filter").value.trim();
  if (!filter) { searched = null; renderPushes(); return; }
  const found = await api(`/api/v1/pushes?q=${encodeURIComponent(filter)}&limit=${KEPT}`);
  if ($("#push-filter").value.trim() !== filter) return;   // typed on: a newer search is coming
  searched = new Map(found.map((push) => [push.id, push]));
  renderPushes();
}

// The page keeps the newest pushes only (the API and the logs have the rest): a long run at
// thousands of pushes a second must not grow the page without end.
const KEPT = 5000, SHOWN = 200;
function addPushes(batch) {
  const rows = document.createDocumentFragment();
  for (const push of batch) {
    pushes.set(push.id, push);
    if (pushes.size > KEPT) pushes.delete(pushes.keys().next().value);
    if (!matches(push)) continue;
    if (searched) {
      searched.set(push.id, push);
      if (searched.size > KEPT) searched.delete(searched.keys().next().value);
    }
    rows.prepend(row(push));
  }
  const body = $("#pushes tbody");
  body.prepend(rows);                       // one change to the page per event
  while (body.rows.length > SHOWN) body.lastElementChild.remove();
  $("#push-count").textContent = countText();
}

function formatted(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

async function select(id) {
  selected = id;
  if (location.hash !== `#pushes/${id}`) history.replaceState(null, "", `#pushes/${id}`);
  for (const tr of document.querySelectorAll("#pushes tr.selected")) tr.classList.remove("selected");
  document.querySelector(`#pushes tr[data-id="${id}"]`)?.classList.add("selected");
  let push = pushes.get(id);
  try { push = await api(`/api/v1/pushes/${id}`); } catch { /* left the view: show what we have */ }
  const detail = $("#detail");
  const parts = [el("h2", {}, `Push ${push.id}: ${push.status}${push.reason ? " " + push.reason : ""}`)];
  if (push.cause) {
    parts.push(el("h3", {}, "Cause and fix"), el("p", { class: "cause" }, push.cause), el("p", { class: "fix" }, push.fix || ""));
  }
  parts.push(el("h3", {}, "Request"),
    el("table", {}, el("tbody", {}, ...[["time", push.time], ["environment", push.environment], ["apns-id", push.apnsID], ["token", push.deviceToken],
      ["topic", push.topic], ["push type", push.pushType], ["priority", push.priority], ["expiration", push.expiration], ["collapse-id", push.collapseID],
      ["detail", push.detail], ["device", push.device], ["answered by", push.node]].filter(([, v]) => v !== null && v !== undefined && v !== "").map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", { title: String(v) }, String(v)))))));
  if (push.headers.length) {
    parts.push(el("h3", {}, "Headers"), el("pre", {}, push.headers.map((h) => `${h.name}: ${h.value}`).join("\n")));
  }
  if (push.providerToken) {
    const t = push.providerToken;
    parts.push(el("h3", {}, "Provider token"), el("pre", {}, JSON.stringify({ header: { alg: t.alg, kid: t.kid }, claims: { iss: t.iss, iat: t.iat } }, null, 2)),
      el("p", { class: push.status === 200 ? "ok" : "" }, t.verdict));
  }
  parts.push(el("h3", {}, "Payload"), el("pre", { class: "payload" }, formatted(push.payload)));
  detail.replaceChildren(...parts);
}

$("#push-filter").addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(search, 150); });
$("#push-clear").addEventListener("click", async () => {
  await api("/api/v1/pushes", { method: "DELETE" });
  pushes.clear();
  if (searched) searched.clear();
  renderPushes();
  $("#detail").replaceChildren();
});

// How new pushes arrive: a Server-Sent Events stream, or short requests once a second. A stream is
// a request that never ends, and headless Chrome's --virtual-time-budget (and any screenshot tool
// that waits for the network to go quiet) waits on it forever: headless Chrome polls, as does
// ?live=poll; ?live=stream forces the stream.
const LIVE = new URLSearchParams(location.search).get("live") ?? (/HeadlessChrome/.test(navigator.userAgent) ? "poll" : "stream");

async function pollPushes() {
  $("#live").textContent = "live"; $("#live").classList.add("on"); $("#live").title = "live updates (polled once a second)";
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const last = [...pushes.keys()].pop() ?? 0;
    try {
      const batch = await api(`/api/v1/pushes?after=${last}&limit=${KEPT}`);
      if (batch.length) addPushes(batch);
      $("#live").textContent = "live"; $("#live").classList.add("on");
    } catch {
      $("#live").textContent = "reconnecting…"; $("#live").classList.remove("on");
    }
  }
}

async function startPushes() {
  for (const push of await api(`/api/v1/pushes?limit=${SHOWN}`)) pushes.set(push.id, push);
  renderPushes();
  if (LIVE === "poll") return pollPushes();
  const events = new EventSource("/api/v1/events");
  events.addEventListener("open", () => { $("#live").textContent = "live"; $("#live").classList.add("on"); });
  events.addEventListener("error", () => { $("#live").textContent = "reconnecting…"; $("#live").classList.remove("on"); });
  events.addEventListener("pushes", (event) => {
    const batch = JSON.parse(event.data);
    addPushes(batch.pushes);
    $("#live").title = batch.skipped ? `live (${batch.skipped} pushes came too fast to show; the API has them)` : "live updates";
  });
}

// --- Sign-ins -----------------------------------------------------------------------------------
let selectedFlow = null;
async function loadFlows() {
  const flows = await api("/api/v1/flows?limit=200");
  $("#flows tbody").replaceChildren(...flows.reverse().map((f) => {
    const good = f.outcome === "signed in" || f.outcome === "linked" || f.outcome.startsWith("second factor enrolled");
    const bad = f.outcome.startsWith("refused");
    const tr = el("tr", { tabindex: "0", "data-id": f.id, class: f.id === selectedFlow ? "selected" : "" },
      el("td", {}, time(f.started)), el("td", {}, f.phoneNumber || ""), el("td", {}, f.path || ""),
      el("td", { class: good ? "outcome-ok" : bad ? "outcome-bad" : "" }, f.outcome), el("td", { title: f.uid || "" }, f.uid ? f.uid.slice(0, 10) + "…" : ""));
    tr.addEventListener("click", () => showFlow(f.id));
    tr.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); showFlow(f.id); } });
    return tr;
  }));
  if (selectedFlow) showFlow(selectedFlow, false);
}
setInterval(() => { if (!$("#page-flows").hidden) loadFlows(); }, 2000);

async function showFlow(id, mark = true) {
  selectedFlow = id;
  if (location.hash !== `#flows/${id}`) history.replaceState(null, "", `#flows/${id}`);
  if (mark) {
    for (const tr of document.querySelectorAll("#flows tr.selected")) tr.classList.remove("selected");
    document.querySelector(`#flows tr[data-id="${id}"]`)?.classList.add("selected");
  }
  const flow = await api(`/api/v1/flows/${id}`);
  // The diagram comes drawn by the server (the renderer of `authsim run --diagram`), its text escaped there.
  const drawn = await fetch(`/api/v1/flows/${id}/diagram`);
  const diagram = el("div");
  diagram.innerHTML = drawn.ok ? await drawn.text() : "";
  const parts = [el("h2", {}, `Sign-in ${flow.id}: ${flow.outcome}`),
    el("p", {}, `${flow.phoneNumber || ""} ${flow.path ? "· " + flow.path : ""}`)];
  if (flow.cause) parts.push(el("h3", {}, "Cause"), el("p", { class: "cause" }, flow.cause));
  parts.push(el("h3", {}, "Timeline"), diagram);
  $("#flow-detail").replaceChildren(...parts);
}

// --- SMS, emails, devices ------------------------------------------------------------------------
async function loadSMS() {
  try {
    const messages = await api("/api/v1/sms");
    $("#sms tbody").replaceChildren(...messages.reverse().map((m) => el("tr", {}, el("td", {}, time(m.sentAt)),
      el("td", {}, m.phoneNumber), el("td", {}, m.code), el("td", {}, m.text), el("td", { title: m.sessionInfo }, m.sessionInfo.slice(0, 10) + "…"))));
  } catch (error) { $("#sms tbody").replaceChildren(el("tr", {}, el("td", { class: "error", colspan: "5" }, error.message))); }
}

async function loadEmails() {
  try {
    const emails = await api("/api/v1/emails");
    $("#emails tbody").replaceChildren(...emails.reverse().map((m) => el("tr", {}, el("td", {}, time(m.sentAt)),
      el("td", {}, m.email + (m.newEmail ? " → " + m.newEmail : "")), el("td", {}, m.requestType),
      el("td", { title: m.code }, m.code.slice(0, 12) + "…"),
      el("td", { title: m.link }, el("a", { href: m.link, target: "_blank", rel: "noopener" }, m.link.replace(/^https?:\/\//, "").slice(0, 48) + "…")),
      el("td", {}, m.used ? "used" : "unused"))));
  } catch (error) { $("#emails tbody").replaceChildren(el("tr", {}, el("td", { class: "error", colspan: "6" }, error.message))); }
}

// --- Users --------------------------------------------------------------------------------------
// What the Emulator Suite's Authentication tab does: list, search, add, edit, disable, delete, custom
// claims, clear; import and export as the emulator's accounts.json. #users/<uid> opens a user with
// their sign-ins, pushes, SMS and emails.
let selectedUser = null;
let userSearchTimer = null;

// Identity Toolkit gives times as milliseconds since 1970, in text. Today's as every page shows a
// time; another day's with its date before it.
const when = (ms) => {
  if (!ms) return "";
  const date = new Date(Number(ms));
  const today = new Date().toDateString() === date.toDateString();
  const day = `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${String(date.getDate()).padStart(2, "0")} `;
  return (today ? "" : day) + time(date.toISOString());
};
const providers = (u) => {
  const ids = (u.providerUserInfo || []).map((p) => p.providerId);
  return ids.length ? ids.join(", ") : (u.customAuth ? "custom" : "anonymous");
};
const identifier = (u) => u.email || u.phoneNumber || (u.providerUserInfo || []).map((p) => p.email || p.rawId).find(Boolean) || "(anonymous)";

async function loadUsers() {
  const query = $("#user-search").value.trim();
  try {
    const users = await api(`/api/v1/users${query ? "?q=" + encodeURIComponent(query) : ""}`);
    if ($("#user-search").value.trim() !== query) return;   // typed on: a newer search is coming
    users.sort((a, b) => Number(b.createdAt || 0) - Number(a.createdAt || 0));
    $("#user-count").textContent = `${users.length} ${users.length === 1 ? "user" : "users"}${query ? " found" : ""}`;
    $("#users tbody").replaceChildren(...users.map((u) => {
      const tr = el("tr", { tabindex: "0", "data-uid": u.localId, class: u.localId === selectedUser ? "selected" : "" },
        el("td", { title: identifier(u) }, identifier(u)), el("td", {}, u.displayName || ""), el("td", {}, providers(u)),
        el("td", {}, when(u.createdAt)), el("td", {}, when(u.lastLoginAt)), el("td", { title: u.localId, class: "mono" }, u.localId),
        el("td", { class: u.disabled ? "outcome-bad" : "" }, u.disabled ? "disabled" : "enabled"));
      tr.addEventListener("click", () => { location.hash = `users/${encodeURIComponent(u.localId)}`; });
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); location.hash = `users/${encodeURIComponent(u.localId)}`; } });
      return tr;
    }));
    if (!users.length) $("#users tbody").replaceChildren(el("tr", {}, el("td", { colspan: "7", class: "hint" }, query ? `No user matches “${query}”.` : "No users yet: add one, import an accounts.json, or sign in from an app.")));
  } catch (error) { $("#users tbody").replaceChildren(el("tr", {}, el("td", { class: "error", colspan: "7" }, error.message))); }
}

function userMessage(text, good = true) { const m = $("#user-message"); m.className = good ? "ok" : "error"; m.textContent = text; }

async function showUser(uid) {
  selectedUser = uid;
  for (const tr of document.querySelectorAll("#users tr.selected")) tr.classList.remove("selected");
  document.querySelector(`#users tr[data-uid="${CSS.escape(uid)}"]`)?.classList.add("selected");
  const detail = $("#user-detail");
  let trail;
  try { trail = await api(`/api/v1/users/${encodeURIComponent(uid)}`); } catch (error) {
    detail.replaceChildren(el("h2", {}, uid), el("p", { class: "error" }, error.message));
    return;
  }
  if (selectedUser !== uid) return;
  const u = trail.user;
  const path = `/api/v1/users/${encodeURIComponent(uid)}`;
  const claims = u.customAttributes && u.customAttributes !== "{}" ? JSON.stringify(JSON.parse(u.customAttributes), null, 2) : "";
  const facts = [["user ID", u.localId], ["email", u.email && `${u.email}${u.emailVerified ? " (verified)" : " (not verified)"}`], ["phone", u.phoneNumber],
    ["display name", u.displayName], ["photo URL", u.photoUrl], ["providers", providers(u)], ["created", when(u.createdAt)], ["last sign-in", when(u.lastLoginAt)],
    ["second factors", (u.mfaInfo || []).map((f) => `${f.phoneInfo}${f.displayName ? " (" + f.displayName + ")" : ""}`).join(", ")],
    ["state", u.disabled ? "disabled" : "enabled"]].filter(([, v]) => v);
  const section = (title, items, render, none) => [el("h3", {}, `${title} (${items.length})`),
    items.length ? el("ul", { class: "trail" }, ...items.map((item) => el("li", {}, ...render(item)))) : el("p", { class: "hint" }, none)];
  const link = (hash, text) => el("a", { href: `#${hash}` }, text);
  detail.replaceChildren(
    el("h2", {}, identifier(u)),
    el("div", { class: "bar" },
      el("button", { type: "button", onclick: () => openUserForm(u) }, "Edit"),
      el("button", { type: "button", onclick: async () => { await api(path, { method: "PATCH", body: JSON.stringify({ disabled: !u.disabled }) }); userMessage(`${identifier(u)} ${u.disabled ? "enabled" : "disabled"}`); loadUsers(); showUser(uid); } },
        u.disabled ? "Enable" : "Disable"),
      el("button", { type: "button", class: "danger", onclick: async () => {
        if (!confirm(`Delete ${identifier(u)} (${uid})? Their refresh tokens stop working.`)) return;
        await api(path, { method: "DELETE" }); userMessage(`deleted ${identifier(u)}`); selectedUser = null; location.hash = "users";
        detail.replaceChildren(el("p", { class: "hint" }, "Deleted.")); loadUsers(); } }, "Delete")),
    el("table", {}, el("tbody", {}, ...facts.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", { title: String(v) }, String(v)))))),
    ...(claims ? [el("h3", {}, "Custom claims"), el("pre", {}, claims)] : []),
    ...section("Sign-ins", [...trail.flows].reverse(), (f) => [link(`flows/${f.id}`, `${time(f.started)} ${f.path || "sign-in"}`), ` · ${f.outcome}`], "None in view."),
    ...section("Pushes", [...trail.pushes].reverse(), (p) => [link(`pushes/${p.id}`, `${time(p.time)} ${p.status}${p.reason ? " " + p.reason : ""}`), ` · ${p.environment} · ${p.deviceToken.slice(0, 8)}…`], "None to their devices in view."),
    ...section("SMS", [...trail.sms].reverse(), (m) => [`${time(m.sentAt)} ${m.phoneNumber}: `, el("code", {}, m.code)], "None to their numbers."),
    ...section("Emails", [...trail.emails].reverse(), (m) => [`${time(m.sentAt)} ${m.requestType} · `, el("a", { href: m.link, target: "_blank", rel: "noopener" }, m.used ? "link (used)" : "link")], "None to their address."));
}

// The add and edit form: a <dialog>. Editing sends only the fields changed; an emptied display name,
// photo URL or phone number is removed; {} or nothing in the claims removes them.
let editing = null;
function openUserForm(user = null) {
  editing = user;
  const form = $("#user-form");
  form.reset();
  $("#user-form-problem").textContent = "";
  $("#user-dialog-title").textContent = user ? `Edit ${identifier(user)}` : "Add a user";
  form.localId.disabled = Boolean(user);
  if (user) {
    for (const name of ["displayName", "photoUrl", "email", "phoneNumber", "localId"]) form[name].value = user[name] || "";
    form.emailVerified.checked = Boolean(user.emailVerified);
    form.disabled.checked = Boolean(user.disabled);
    form.customClaims.value = user.customAttributes && user.customAttributes !== "{}" ? JSON.stringify(JSON.parse(user.customAttributes), null, 2) : "";
    form.password.placeholder = "unchanged if left empty";
  } else form.password.placeholder = "at least 6 characters";
  $("#user-dialog").showModal();
}

$("#user-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const body = {};
  for (const name of ["displayName", "photoUrl", "email", "phoneNumber", "password", "localId"]) {
    const value = form[name].value.trim();
    if (editing ? (name !== "password" && name !== "localId" && value !== (editing[name] || "")) || (name === "password" && value) : value) body[name] = value;
  }
  for (const name of ["emailVerified", "disabled"]) {
    if (editing ? form[name].checked !== Boolean(editing[name]) : form[name].checked) body[name] = form[name].checked;
  }
  const claimsText = form.customClaims.value.trim();
  const before = editing && editing.customAttributes && editing.customAttributes !== "{}" ? JSON.stringify(JSON.parse(editing.customAttributes)) : "";
  if (claimsText || before) {
    try { body.customClaims = claimsText ? JSON.parse(claimsText) : {}; } catch (error) {
      $("#user-form-problem").textContent = `The custom claims are not JSON: ${error.message}`; return;
    }
    if (typeof body.customClaims !== "object" || Array.isArray(body.customClaims) || body.customClaims === null) {
      $("#user-form-problem").textContent = "The custom claims are a JSON object, as {\"role\": \"admin\"}."; return;
    }
    if (editing && JSON.stringify(body.customClaims) === before) delete body.customClaims;
  }
  if (editing && !Object.keys(body).length) { $("#user-dialog").close(); return; }
  try {
    const user = editing
      ? await api(`/api/v1/users/${encodeURIComponent(editing.localId)}`, { method: "PATCH", body: JSON.stringify(body) })
      : await api("/api/v1/users", { method: "POST", body: JSON.stringify(body) });
    $("#user-dialog").close();
    userMessage(`${editing ? "saved" : "added"} ${identifier(user)}`);
    await loadUsers();
    location.hash = `users/${encodeURIComponent(user.localId)}`;
    showUser(user.localId);
  } catch (error) { $("#user-form-problem").textContent = error.message; }
});
$("#user-cancel").addEventListener("click", () => $("#user-dialog").close());
$("#user-add").addEventListener("click", () => openUserForm());
$("#user-search").addEventListener("input", () => { clearTimeout(userSearchTimer); userSearchTimer = setTimeout(loadUsers, 150); });
$("#user-clear").addEventListener("click", async () => {
  if (!confirm("Delete every user? SMS, emails and devices stay.")) return;
  await api("/api/v1/users", { method: "DELETE" });
  userMessage("every user deleted"); selectedUser = null; location.hash = "users";
  $("#user-detail").replaceChildren(el("p", { class: "hint" }, "Every user was deleted."));
  loadUsers();
});
$("#user-export").addEventListener("click", async () => {
  const file = await api("/api/v1/accounts.json");
  const a = el("a", { href: URL.createObjectURL(new Blob([JSON.stringify(file, null, 2)], { type: "application/json" })), download: "accounts.json" });
  a.click();
  URL.revokeObjectURL(a.href);
  userMessage(`exported ${file.users.length} ${file.users.length === 1 ? "user" : "users"} as accounts.json`);
});
$("#user-import").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  event.target.value = "";
  if (!file) return;
  const text = await file.text();
  const post = (overwrite) => api(`/api/v1/accounts.json${overwrite ? "?overwrite=true" : ""}`, { method: "POST", body: text });
  try {
    let report;
    try { report = await post(false); } catch (error) {
      if (!/exist/.test(error.message) || !confirm(`${error.message}\n\nReplace them with the file's?`)) throw error;
      report = await post(true);
    }
    userMessage(`imported ${report.imported} ${report.imported === 1 ? "user" : "users"} from ${file.name}${report.replaced ? ` (${report.replaced} replaced)` : ""}`);
    loadUsers();
  } catch (error) { userMessage(`${file.name}: ${error.message}`, false); }
});

async function loadDevices() {
  const devices = await api("/api/v1/devices");
  $("#devices tbody").replaceChildren(...devices.map((d) => el("tr", {},
    el("td", { title: d.token }, d.token.slice(0, 16) + "…"), el("td", {}, d.environment), el("td", {}, d.bundleID), el("td", {}, d.state), el("td", {}, d.label || ""),
    el("td", {}, d.state === "active" ? el("button", { type: "button", onclick: async () => { await api(`/api/v1/devices/${d.environment}/${d.token}/invalidate?as=unregistered`, { method: "POST" }); loadDevices(); } }, "Invalidate (410 Unregistered)") : ""))));
}

$("#device-add").addEventListener("submit", async (event) => {
  event.preventDefault();
  const message = $("#device-message");
  try {
    const device = await api("/api/v1/devices", { method: "POST", body: JSON.stringify({
      environment: $("#device-environment").value, bundleID: $("#device-bundle").value.trim(), label: $("#device-label").value.trim() || undefined }) });
    message.className = "ok"; message.textContent = `registered ${device.token.slice(0, 12)}… in ${device.environment}`;
    loadDevices();
  } catch (error) { message.className = "error"; message.textContent = error.message; }
});

// --- Faults -------------------------------------------------------------------------------------
async function loadFaults() {
  const list = await api("/api/v1/faults");
  $("#faults-text").value = list.faults.join("\n");
}
$("#faults-save").addEventListener("click", async () => {
  const faults = $("#faults-text").value.split("\n").map((line) => line.trim()).filter(Boolean);
  const message = $("#faults-message");
  try {
    const list = await api("/api/v1/faults", { method: "PUT", body: JSON.stringify({ faults }) });
    $("#faults-text").value = list.faults.join("\n");
    message.className = "ok"; message.textContent = `${list.faults.length} rule(s) in force`;
  } catch (error) { message.className = "error"; message.textContent = error.message; }
});
$("#faults-clear").addEventListener("click", async () => {
  await api("/api/v1/faults", { method: "DELETE" });
  $("#faults-text").value = ""; $("#faults-message").className = "ok"; $("#faults-message").textContent = "no faults";
});

startPushes();
route();
