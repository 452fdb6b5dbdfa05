// The filter of a project page (project.html): it narrows the index, the explained errors
// and the files to those holding every word typed, and opens the folders that hold them.
// A module script of that page alone.

function initFilter() {
  const box = document.querySelector("[data-filter-box]");
  if (!box) return;
  const input = box.querySelector("[data-filter-input]");
  const count = box.querySelector("[data-filter-count]");
  const groups = [...document.querySelectorAll("[data-filter-group]")];
  const items = groups.map((group) => [group, [...group.querySelectorAll("[data-filter-item]")], group.open]);
  // A file's row says its path in its link only (urls.source_file: .../files/<path>/).
  for (const row of document.querySelectorAll("[data-filter-item]:not([data-filter-text])")) {
    const path = decodeURIComponent(row.querySelector("a").pathname).split("/files/").slice(1).join("/files/");
    row.dataset.filterText = path.replace(/(\/|\.html)$/, "").toLowerCase();
  }
  box.hidden = false;
  const apply = () => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = new Set(); // a record in the index and in the explained list counts once
    for (const [group, rows, open] of items) {
      let visible = 0;
      for (const row of rows) {
        const match = words.every((word) => row.dataset.filterText.includes(word));
        row.hidden = !match;
        visible += match;
        if (match) shown.add(row.querySelector("a").href);
      }
      group.hidden = visible === 0;
      // A closed folder opens while it holds what the words find, and closes again after.
      if (group.tagName === "DETAILS") group.open = words.length ? visible > 0 : open;
    }
    count.textContent = words.length ? `${shown.size} shown` : "";
  };
  input.addEventListener("input", apply);
  if (input.value) apply();
}

initFilter();
