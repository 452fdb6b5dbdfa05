// The memory estimate's Python side, loaded by memory.js on the first question: memory.py
// in the calculator's worker (calc-client.js), and its answer in words. An estimate, and
// it says so.

const GIB = 2 ** 30;
let client = null;
let asked = 0;

function el(tag, props, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

const VERDICT = {
  oom: "torch's CUDA out of memory while loading the weights: they are larger than the GPU.",
  no_cache_memory: "vLLM stops: No available memory for the cache blocks.",
  max_model_len: "vLLM stops: one request of --max-model-len does not fit in the KV cache.",
};

const gib = (bytes) => `${(bytes / GIB).toFixed(1)} GiB`;

// The request: numbers as numbers (a value from the address may carry its unit: "79.15 GiB").
function request(inputs, fields) {
  const out = { module: "memory", op: "estimate" };
  for (const [name, , , , kind] of fields) {
    const input = inputs[name];
    if (kind === "bool") out[name] = input.checked;
    else if (Array.isArray(kind)) out[name] = input.value;
    else {
      const number = Number.parseFloat(input.value);
      const whole = ["layers", "kv_heads", "head_dim", "tp", "pp", "max_model_len"].includes(name);
      out[name] = Number.isNaN(number) ? input.value : whole ? Math.round(number) : number;
    }
  }
  return out;
}

function start(root, config) {
  client ??= import(config.client).then(({ connect }) => connect(config, [root.dataset.src]));
  return client;
}

// Asked by memory.js (Estimate, or a value changed): the estimate of the form's values, the
// last question's answer only.
export async function estimate(root, config, inputs, fields) {
  const mine = ++asked;
  const out = root.querySelector("[data-out=memory]");
  if (!out.childElementCount) out.textContent = "Loading Python (Pyodide) to run the estimate…";
  let answer;
  try {
    answer = await (await start(root, config)).ask(request(inputs, fields));
  } catch (error) {
    answer = { error: error.message };
  }
  if (mine === asked) out.replaceChildren(...show(answer, config));
}

function show({ result, error }, config) {
  if (error) return [el("p", { className: "calc-bad" }, error)];
  const r = result;
  const lines = [
    el("p", {}, `Budget per GPU: ${gib(r.budget)} of ${gib(r.total)}; weights per GPU: ${gib(r.weights)}; overhead: ${gib(r.overhead)}.`),
  ];
  if (r.error?.kind !== "oom") {
    const left = r.available > 0 ? gib(r.available) : "nothing";
    const perToken = `${(r.kv_per_token / 1024).toFixed(0)} KiB a token over its ${r.stage_layers} layers`;
    lines.push(el("p", {}, `Left for the KV cache: ${left} (${perToken}): about ${r.tokens.toLocaleString("en")} tokens, ${r.concurrency.toFixed(1)} requests of the full length at once.`));
  }
  if (r.error) {
    const verdict = el("p", { className: "calc-bad" }, VERDICT[r.error.kind]);
    const title = r.error.id && config.records[r.error.id];
    if (title) verdict.append(" Its page: ", el("a", { href: config.errors_url.replace("{}", r.error.id) }, title));
    lines.push(verdict);
  } else lines.push(el("p", { className: "calc-good" }, "Memory is enough for these values (the other checks are not made here)."));
  lines.push(el("p", { className: "calc-note" }, "An estimate: real weights and overhead differ by model and release."));
  return lines;
}

