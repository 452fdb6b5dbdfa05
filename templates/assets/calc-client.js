// The page's side of the calculator's worker (calc-worker.js: calc.py and its sibling modules
// under Pyodide), shared by the widgets that ask it: calc.js (parallel sizes) and divisors.js (a
// divisibility error's divisors). One worker per page, started by the first widget that asks.
// connect(config, also) -> {ready, ask(request), onProgress(fn)}: `ready` settles once Python
// has loaded or failed (an Error whose message is meant for the visitor); `ask` resolves to
// the answer of the module the request names (`module`, default calc.py), {result} or {error}.

const LOAD_TIMEOUT_MS = 90_000;
let shared = null;

// `config` is calc.json (the worker's, the modules' and Pyodide's addresses); `also` lists the
// page's own files of the calculator, kept with Python's for the next visit.
export function connect(config, also = []) {
  shared ??= start(config, also);
  return shared;
}

function start(config, also) {
  const listeners = new Set();
  const pending = new Map();
  let next = 1;
  let worker;
  let failed = null;
  const ready = new Promise((resolve, reject) => {
    const settle = (error) => {
      clearTimeout(timer);
      if (!error) return resolve();
      failed = error;
      for (const waiting of pending.values()) waiting.reject(error);
      pending.clear();
      reject(error);
    };
    const timer = setTimeout(() => {
      const late = `The calculator did not finish loading in ${LOAD_TIMEOUT_MS / 1000} s`;
      settle(new Error(`${late}; check the network and reload.`));
    }, LOAD_TIMEOUT_MS);
    try {
      worker = new Worker(config.worker, { type: "module", name: "errorkb-calc" });
    } catch (error) {
      return settle(new Error(`The calculator's worker could not start: ${error.message}`));
    }
    worker.addEventListener("message", ({ data }) => {
      if (data.progress) for (const listener of listeners) listener(data.progress);
      else if (data.ready !== undefined) {
        keep([config.worker, import.meta.url, ...also], data.fetched);
        settle(null);
      } else if (data.failed) settle(new Error(data.failed));
      else if (pending.has(data.id)) {
        pending.get(data.id).resolve(data.answer);
        pending.delete(data.id);
      }
    });
    worker.addEventListener("error", (event) => {
      event.preventDefault();
      const why = event.message || "its script was blocked by the page's policy, or is missing";
      settle(new Error(`The calculator's worker failed: ${why}.`));
    });
    worker.postMessage({ init: { modules: config.modules, pyodide: config.pyodide } });
  });
  ready.catch(() => {}); // each caller hears of a failure through `ready` or `ask`

  return {
    ready,
    onProgress: (listener) => listeners.add(listener),
    // Posted at once: the worker answers when Python has loaded, in the order asked.
    ask(request) {
      if (failed) return Promise.reject(failed);
      return new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, request });
      });
    },
  };
}

// Python's files, fetched by the worker perhaps before the service worker took over: it
// keeps them for the next visit (from the HTTP cache, not downloaded again).
function keep(mine, fetched) {
  const urls = [...mine.map((url) => new URL(url, location.href).href), ...fetched];
  navigator.serviceWorker?.ready.then((reg) => reg.active?.postMessage({ keep: urls }), () => {});
}
