// The report's one script: a click on a column head of a table.sortable sorts its rows by that
// column (figures as numbers, sizes such as 32M by their bytes, '-' last; text alphabetically), a second click the other way. Without
// script the tables stay in the report's order, so nothing is lost.
for (const table of document.querySelectorAll("table.sortable")) {
  table.querySelectorAll("thead th").forEach((th, col) => {
    th.tabIndex = 0;
    th.classList.add("sorts");
    const sort = () => {
      const body = table.tBodies[0], rows = Array.from(body.rows);
      const down = th.getAttribute("aria-sort") === "ascending";
      const key = r => {
        const t = (r.cells[col] ? r.cells[col].textContent : "").trim();
        const m = /^([-+]?[\d.]+(?:e[-+]?\d+)?)\s*([KMG]?)/.exec(t.replace(/,/g, ""));
        const v = m ? parseFloat(m[1]) * ({K: 2 ** 10, M: 2 ** 20, G: 2 ** 30}[m[2]] || 1) : NaN;
        return th.classList.contains("n") ? (Number.isNaN(v) ? null : v) : t;
      };
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === null || y === null) return (x === null) - (y === null);
        const c = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
        return down ? -c : c;
      });
      table.querySelectorAll("thead th").forEach(h => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      rows.forEach(r => body.appendChild(r));
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", e => { if (e.key === "Enter") sort(); });
  });
}
