// The calculator's side that runs once the visitor asks (calc.js loads it on the first
// Calculate or changed value): the worker (calc-client.js, calc.py in Pyodide, about 13 MB)
// and its answer in words. A page opened with values loads none of it before anyone asks.
// calc.js hands over what both use (`kit`): its config, el, val, list, label and advise,
// the one rule of what to start instead, shared with the table's answer.

let config, el, val, list, label, advise;
let client = null; // calc-client.js's connection to the worker, made by the first start
let asked = 0; // numbers each question, so that a widget shows only its latest answer

// The progress line beside the button; what stands in the answer's place is left alone.
function loading(widget, text) {
  widget.progress.hidden = !text;
  widget.loading.textContent = text;
  if (text && widget.root.dataset.state !== "table") widget.root.dataset.state = "loading";
}

function say(widget, state, text, className = "calc-bad") {
  widget.root.dataset.state = state;
  widget.out.replaceChildren(el("p", { className }, text));
}

function start(widget) {
  if (widget.started) return;
  widget.started = true;
  loading(widget, "Loading Python for the calculator…");
  client ??= import(config.client).then(
    ({ connect }) => connect(config, [widget.root.dataset.src]),
    (error) => Promise.reject(new Error(`The calculator's script could not load: ${error.message}`)),
  );
  client
    .then((calculator) => {
      calculator.onProgress((text) => {
        widget.progress.value += 1;
        loading(widget, text);
      });
      return calculator.ready;
    })
    .then(() => loading(widget, ""), (error) => fail(widget, error.message));
}

function fail(widget, text) {
  loading(widget, "");
  // The table's answer stands; the failure is said below it.
  if (widget.root.dataset.state !== "table") return say(widget, "failed", text);
  widget.out.append(el("p", { className: "calc-bad" }, text));
  widget.root.dataset.state = "failed";
}

export async function ask(widget, kit) {
  ({ config, el, val, list, label, advise } = kit);
  start(widget);
  const request = { op: widget.op };
  for (const name of widget.fields) {
    const value = val(widget, name);
    // calc.py takes the architecture's attention layer, from the wing's table; an unknown
    // one is left out, and calc.py answers with the layer it assumes
    if (name === "architecture") {
      if (config.architectures[value]) request.attention = config.architectures[value];
    } else if (value !== undefined) request[name] = value;
  }
  const mine = (widget.latest = ++asked);
  widget.asked = performance.now();
  let answer;
  try {
    answer = await (await client).ask(request);
  } catch {
    return; // start() says why the calculator failed
  }
  if (widget.latest === mine) show(widget, answer);
}

function show(widget, answer) {
  loading(widget, "");
  const error = answer.error;
  if (error) {
    const missing = /needs (.*)$/.exec(error);
    const names = missing && missing[1].split(", ").map(label).join(", ");
    say(widget, "invalid", missing ? `Enter: ${names}.` : error.replace(/^\w+(?= must)/, label));
  } else {
    widget.root.dataset.state = "answered";
    const render = widget.op === "moriio" ? moriio : summary;
    widget.out.replaceChildren(...render(widget, answer.result));
  }
  const ms = performance.now() - widget.asked;
  widget.root.dispatchEvent(new CustomEvent("calc:answer", { detail: { ms, answer } }));
}

function errorBlock(lead, error) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(error.values)) {
    if (!(value instanceof Object)) query.set(key, value);
  }
  const url = config.errors_url.replace("{}", error.id);
  const title = config.records[error.id];
  const href = `${url}?${query}`;
  const link = title ? el("a", { href, className: "calc-record" }, title) : error.id;
  const here = location.pathname === url ? " (this page)" : "";
  if (!error.id) { // an assert without a message, or an error of Python's: no record of its own
    const head = el("p", {}, `${lead} at ${error.stage} time: ${error.exception}, raised by`);
    return el("div", { className: "calc-bad" }, head, el("code", { className: "message" }, error.message));
  }
  const message = el("code", { className: "message" }, `${error.exception}: ${error.message}`);
  const head = el("p", {}, `${lead} at ${error.stage} time: `, link, here);
  return el("div", { className: "calc-bad" }, head, message);
}

function line(text, values, key) {
  const value = el("span", {}, list(values));
  value.dataset.out = key;
  return el("p", {}, el("strong", {}, `${text}: `), value);
}

function summary(widget, result) {
  const v = (name) => val(widget, name);
  const kv = v("kv_heads") ? `${v("kv_heads")} KV heads` : "KV heads not given (as many)";
  const model = `${v("heads")} heads, ${kv}${v("mla") ? ", MLA" : ""}`;
  const out = [line(`Valid TP sizes for ${model}`, result.valid_tp_sizes, "valid-tp")];
  if (result.attention) out.unshift(attentionLine(result.attention, v("architecture")));
  if ("first_error" in result) {
    let sizes = `TP ${v("tp")}`;
    for (const name of ["pp", "dp", "dcp", "pcp", "attn_dp", "ep"]) {
      const value = v(name) || 1;
      if (widget.inputs[name] && (value != 1 || ["dcp", "pcp"].includes(name))) {
        sizes += `, ${name.replace("_", " ").toUpperCase()} ${value}`;
      }
    }
    const ok = el("p", { className: "calc-good" }, `${sizes}: no error at config or load time.`);
    out.push(result.first_error ? errorBlock(`${sizes} fails`, result.first_error) : ok);
    if (result.suggestion) out.push(...advise(result.suggestion, model, result.valid_tp_sizes, Number(v("tp"))));
    if (result.node) out.push(nodeLine(result.node));
    if (result.valid_dcp_sizes?.length) {
      out.push(line(`Valid DCP sizes with TP ${v("tp")}`, result.valid_dcp_sizes, "valid-dcp"));
    }
  }
  if (result.layouts) out.push(layouts(result, v("gpus")));
  return out;
}

// Which TP size the model's attention layer splits its heads over (calc.py's code, "tp:hkp").
function attentionLine({ code, assumed }, architecture) {
  const flags = config.flags;
  const over = code.startsWith("attn_tp")
    ? `the attention TP size (${flags.tp} ÷ ${flags.attn_dp})`
    : `the full ${flags.tp}`;
  const source = `${config.engine} ${config.architectures_release}'s model files`;
  let text = `${architecture}'s attention layer splits its heads over ${over} (read from ${source}).`;
  if (assumed) {
    const which = architecture ? `${architecture} is not among ${source}'s architectures` : "No architecture given";
    text = `${which}: assumed the attention layer most models have (Llama's), which splits its heads over ${over}.`;
  }
  const p = el("p", { className: assumed ? "muted" : "" }, el("strong", {}, "Attention: "), text);
  p.dataset.out = "attention";
  return p;
}

// Where the workers go: fits (true), too many for a node (false), or not known (null).
function nodeLine(node) {
  const className = { true: "calc-good", false: "calc-bad" }[node.fits] || "muted";
  const where = el("p", { className }, el("strong", {}, "Where it runs: "), node.note);
  where.dataset.out = "node";
  return where;
}

function layouts(result, gpus) {
  const shown = result.layouts.length;
  if (!shown) return el("p", {}, `No TP × PP × DP layout uses exactly ${gpus} GPUs here.`);
  const total = result.layouts_total;
  const some = shown < total ? ` (the first ${shown} of ${total})` : "";
  const table = el("table", { className: "calc-layouts" });
  table.append(el("caption", {}, `Layouts for ${gpus} GPUs, best first${some}`));
  const rows = [["TP", "PP", "DP", "DCP", "Why"]];
  for (const e of result.layouts) rows.push([e.tp, e.pp, e.dp, list(e.dcp), e.reason]);
  rows.forEach((cells, i) => {
    table.append(el("tr", {}, ...cells.map((c) => el(i ? "td" : "th", {}, String(c)))));
  });
  return table;
}

function moriio(widget, result) {
  if (result.first_error) return [errorBlock("These sizes fail", result.first_error)];
  const n = result.expected_acks;
  const text = `MoRIIO accepts these sizes; each prefill rank waits for ${n} release ACK`;
  return [el("p", { className: "calc-good" }, `${text}${n === 1 ? "" : "s"} per transfer.`)];
}
