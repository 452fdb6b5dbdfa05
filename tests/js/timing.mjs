// How long match.js takes to answer each paste (search and the report link), for
// tests/test_linear.py: node tests/js/timing.mjs <site folder> <pastes.json>, where the
// pastes are {name: text}; prints [name, seconds] as JSON, a line per paste as it is done.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Index } from "../../templates/assets/match.js";

const [site, pastes] = process.argv.slice(2);
for (const [name, text] of Object.entries(JSON.parse(readFileSync(pastes, "utf8")))) {
  const index = new Index("/search/index.json", async (url) => {
    const body = readFileSync(join(site, url));
    return { json: async () => JSON.parse(body) };
  });
  await index.context(); // the index's files are read before the clock starts, as a browser has them
  const start = performance.now();
  await index.search(text);
  await index.reportUrl(text);
  console.log(JSON.stringify([name, (performance.now() - start) / 1000]));
}
