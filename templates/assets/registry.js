// The architectures the engine registers at the page's release (answer.py's registered),
// fetched by members.js only on a page whose answer reads them (#case-registry, whose line
// is shown once they answer). A name of the user's that the engine loads as a registered one
// with another ending joins them (answer.py's converted).

const line = document.getElementById("case-registry");
const archs = await fetch(new URL(line.dataset.registry, import.meta.url)).then((r) => r.json()).catch(() => 0);

export function registered(values, name) {
  if (archs?.held_as[0] !== name) return null;
  line.hidden = false;
  const known = new Set(archs.architectures);
  const named = new Set(Object.values(values).flatMap((v) => String(v).match(/[A-Za-z_]\w*/g) ?? []));
  const loaded = [...named].filter((w) => !known.has(w) && converted(w, known, archs.suffixes ?? [])).sort();
  // the line counts what the answer counts (answer.py's counted)
  line.dataset.note ??= line.textContent;
  const n = archs.architectures.length + loaded.length;
  line.textContent = line.dataset.note + (loaded.length ? ` With yours: ${n} names, ${loaded.join(", ")} among them.` : "");
  return [...archs.architectures, ...loaded];
}

function converted(name, known, suffixes) {
  const end = suffixes.find((s) => name.endsWith(s));
  return end !== undefined && suffixes.some((s) => s !== end && known.has(name.replaceAll(end, s)));
}
