// polydeid web page: plain JavaScript, no frameworks, no external assets.
// Text is only ever inserted with textContent (never as HTML).
"use strict";

(() => {
  const KEY_STORAGE = "polydeid.apiKey";
  const $ = (id) => document.getElementById(id);
  const ui = {
    form: $("form"),
    keyField: $("key-field"),
    key: $("api-key"),
    note: $("note"),
    file: $("file"),
    clearFile: $("clear-file"),
    lang: $("lang"),
    policy: $("policy"),
    policyHelp: $("policy-help"),
    run: $("run"),
    status: $("status"),
    results: $("results"),
    highlighted: $("highlighted"),
    legend: $("legend"),
    output: $("output"),
    download: $("download"),
  };

  let authRequired = false;
  let listsLoaded = false;
  let hasRun = false;
  let runCounter = 0;
  let downloadName = "deidentified.txt";
  const policyDescriptions = new Map();

  function setStatus(message, isError = false) {
    ui.status.textContent = message;
    ui.status.classList.toggle("error", isError);
  }

  function apiHeaders() {
    const headers = {};
    const key = sessionStorage.getItem(KEY_STORAGE);
    if (key) headers["X-API-Key"] = key;
    return headers;
  }

  async function api(path, options = {}) {
    const response = await fetch(path, {
      ...options,
      headers: { ...apiHeaders(), ...(options.headers || {}) },
      cache: "no-store",
      credentials: "same-origin",
    });
    const type = response.headers.get("content-type") || "";
    const body = type.includes("json") ? await response.json() : null;
    if (response.status === 401) {
      showKeyField();
      throw new Error("This service needs an API key: enter it above, then try again.");
    }
    if (!response.ok) {
      const reason = body && body.title
        ? `${body.title}: ${body.detail} (${body.code})`
        : `HTTP ${response.status}`;
      throw new Error(reason);
    }
    return body;
  }

  function showKeyField() {
    authRequired = true;
    ui.keyField.hidden = false;
  }

  // --- the lists: languages and policies --------------------------------------------------

  async function loadLists() {
    const [langs, policies] = await Promise.all([api("/languages"), api("/policies")]);
    ui.lang.replaceChildren(ui.lang.options[0]); // keep "Detect automatically"
    for (const lang of langs.languages) {
      const option = document.createElement("option");
      option.value = lang.code;
      option.textContent = `${lang.name} (${lang.code})`;
      ui.lang.append(option);
    }
    ui.policy.replaceChildren();
    for (const policy of policies.policies) {
      const option = document.createElement("option");
      option.value = policy.name;
      option.textContent = policy.available
        ? policy.name
        : `${policy.name} (needs a server key)`;
      option.disabled = !policy.available;
      option.selected = policy.default;
      policyDescriptions.set(policy.name, policy.description);
      ui.policy.append(option);
    }
    describePolicy();
    listsLoaded = true;
  }

  function describePolicy() {
    ui.policyHelp.textContent = policyDescriptions.get(ui.policy.value) || "";
  }

  async function init() {
    try {
      const health = await api("/health");
      if (health.auth_required) {
        showKeyField();
        ui.key.value = sessionStorage.getItem(KEY_STORAGE) || "";
      }
      if (!authRequired || ui.key.value) await loadLists();
      else setStatus("Enter the API key to start.");
    } catch (error) {
      setStatus(error.message, true);
    }
  }

  // --- running ----------------------------------------------------------------------------

  async function run() {
    const file = ui.file.files[0];
    const text = ui.note.value;
    if (!file && !text.trim()) {
      setStatus("Nothing to de-identify: paste a note or choose a file.", true);
      ui.note.focus();
      return;
    }
    if (authRequired && !sessionStorage.getItem(KEY_STORAGE)) {
      setStatus("Enter the API key first.", true);
      ui.key.focus();
      return;
    }
    const current = ++runCounter;
    ui.run.disabled = true;
    ui.form.setAttribute("aria-busy", "true");
    setStatus("De-identifying…");
    try {
      if (!listsLoaded) await loadLists();
      let original;
      let result;
      if (file) {
        original = await file.text();
        const form = new FormData();
        form.append("file", file);
        form.append("lang", ui.lang.value);
        if (ui.policy.value) form.append("policy", ui.policy.value);
        result = await api("/redact", { method: "POST", body: form });
        downloadName = deidentifiedName(file.name);
      } else {
        original = text;
        const body = { text, lang: ui.lang.value };
        if (ui.policy.value) body.policy = ui.policy.value;
        result = await api("/redact", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        downloadName = "deidentified.txt";
      }
      if (current !== runCounter) return; // a newer run replaced this one
      render(original, result);
      hasRun = true;
      const n = result.spans.length;
      setStatus(
        `Done: ${n} identifier${n === 1 ? "" : "s"} found (language ${result.lang}, ` +
        `policy ${result.policy}).`,
      );
    } catch (error) {
      if (current === runCounter) setStatus(error.message, true);
    } finally {
      if (current === runCounter) {
        ui.run.disabled = false;
        ui.form.removeAttribute("aria-busy");
      }
    }
  }

  function deidentifiedName(name) {
    const dot = name.lastIndexOf(".");
    return dot > 0 ? `${name.slice(0, dot)}.deid${name.slice(dot)}` : `${name}.deid.txt`;
  }

  // Offsets from the server count code points; JavaScript strings count UTF-16 units.
  function render(original, result) {
    const chars = Array.from(original);
    const spans = [...result.spans].sort((a, b) => a.start - b.start || b.end - a.end);
    const fragment = document.createDocumentFragment();
    const counts = new Map();
    let pos = 0;
    for (const span of spans) {
      if (span.start < pos || span.end > chars.length) continue;
      fragment.append(document.createTextNode(chars.slice(pos, span.start).join("")));
      const mark = document.createElement("mark");
      mark.dataset.label = span.label;
      mark.title = `${span.label} · score ${Number(span.score).toFixed(2)} · ${span.source}`;
      mark.textContent = chars.slice(span.start, span.end).join("");
      fragment.append(mark);
      counts.set(span.label, (counts.get(span.label) || 0) + 1);
      pos = span.end;
    }
    fragment.append(document.createTextNode(chars.slice(pos).join("")));
    ui.highlighted.replaceChildren(fragment);

    ui.legend.replaceChildren();
    if (counts.size === 0) {
      const item = document.createElement("li");
      item.textContent = "No identifiers found.";
      ui.legend.append(item);
    }
    for (const [label, count] of [...counts].sort()) {
      const item = document.createElement("li");
      const swatch = document.createElement("mark");
      swatch.dataset.label = label;
      swatch.textContent = label;
      item.append(swatch, document.createTextNode(` × ${count}`));
      ui.legend.append(item);
    }

    const output = result.kind === "text" ? result.text : result.document;
    ui.output.value = typeof output === "string" ? output : JSON.stringify(output, null, 2);
    ui.results.hidden = false;
  }

  function download() {
    const blob = new Blob([ui.output.value], { type: "text/plain;charset=utf-8" });
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = downloadName;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  // --- events -----------------------------------------------------------------------------

  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    run();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run();
    }
  });
  ui.policy.addEventListener("change", () => {
    describePolicy();
    if (hasRun) run();
  });
  ui.file.addEventListener("change", () => {
    const chosen = ui.file.files.length > 0;
    ui.clearFile.disabled = !chosen;
    if (chosen) setStatus("A file is chosen: it is de-identified instead of the text.");
  });
  ui.clearFile.addEventListener("click", () => {
    ui.file.value = "";
    ui.clearFile.disabled = true;
    setStatus("File cleared: the text is de-identified.");
    ui.file.focus();
  });
  ui.key.addEventListener("change", async () => {
    const key = ui.key.value.trim();
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
    if (key && !listsLoaded) {
      try {
        await loadLists();
        setStatus("Key accepted.");
      } catch (error) {
        setStatus(error.message, true);
      }
    }
  });
  ui.download.addEventListener("click", download);

  init();
})();
