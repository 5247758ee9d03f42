// One shared player for every "Play" button (templates/_play_button.html), through one delegated listener:
// a second click on the same button stops it. No inline handlers anywhere, so a Content-Security-Policy
// without inline script holds.
(function () {
  var player = new Audio();
  var current = null;
  function reset() {
    if (current) { current.textContent = current.dataset.label; current.setAttribute("aria-pressed", "false"); }
    current = null;
  }
  player.addEventListener("ended", reset);
  player.addEventListener("error", function () {
    if (current) { current.textContent = "Audio unavailable"; current.disabled = true; }
    current = null;
  });
  function play(button) {
    if (!button.dataset.label) { button.dataset.label = button.textContent; }
    if (current === button) { player.pause(); reset(); return; }
    reset();
    current = button;
    player.src = button.dataset.src;
    button.textContent = "■ Stop";
    button.setAttribute("aria-pressed", "true");
    player.play().catch(function () {});
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.play[data-src]");
    if (button) { play(button); }
  });
})();

// A <select data-submit-on-change> submits its form as soon as a choice is made (a <noscript> button stands in
// without JavaScript), through one delegated listener instead of inline onchange handlers.
document.addEventListener("change", function (event) {
  var select = event.target.closest("select[data-submit-on-change]");
  if (select && select.form) { select.form.submit(); }
});

// An <input data-select-on-focus> (a new API key) selects its whole text when focused, for copying.
document.addEventListener("focusin", function (event) {
  if (event.target.matches && event.target.matches("input[data-select-on-focus]")) { event.target.select(); }
});

// The call page's keys (its help line lists them): j / k move to the next / previous caller line, f opens its
// flag form (or its flag's), p plays it, Esc closes an open flag form. Keys typed into a field are left alone,
// except Esc. The current line is remembered by id, so it survives htmx swapping the line's row.
(function () {
  var currentId = null;
  function callerLines() {
    return Array.prototype.slice.call(document.querySelectorAll("ol.lines[data-keys] > li.line.caller"));
  }
  function current() { return currentId ? document.getElementById(currentId) : null; }
  function mark(li, focus) {
    var old = document.querySelector("ol.lines li.line.current");
    if (old && old !== li) { old.classList.remove("current"); }
    li.classList.add("current");
    li.setAttribute("tabindex", "-1");
    currentId = li.id;
    if (focus) { li.focus(); li.scrollIntoView({ block: "nearest" }); }
  }
  // A row htmx swapped in is wired up only when it settles (20 ms later): a key pressed before that would follow
  // the link as a page load. Wiring it now is harmless (htmx does it once) and makes the key always swap the row.
  function follow(link) {
    if (window.htmx) { window.htmx.process(link); }
    link.click();
  }
  function inField(target) {
    return target.closest && target.closest("input, textarea, select, [contenteditable]");
  }
  document.addEventListener("keydown", function (event) {
    if (!document.querySelector("ol.lines[data-keys]") || event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.key === "Escape") {
      var cancel = document.querySelector("form.flag-form a.cancel");
      if (cancel) { event.preventDefault(); follow(cancel); }
      return;
    }
    if (inField(event.target)) { return; }
    var lines = callerLines();
    var li = current();
    var i = lines.indexOf(li);
    if (event.key === "j" || event.key === "k") {
      var next = event.key === "j" ? lines[i + 1] : lines[i < 0 ? 0 : i - 1];
      if (next) { event.preventDefault(); mark(next, true); }
    } else if (event.key === "f" && li) {
      var open = li.querySelector("a.flag-link, button.edit-flag");
      if (open) { event.preventDefault(); follow(open); }
    } else if (event.key === "p" && li) {
      var play = li.querySelector("button.play");
      if (play) { event.preventDefault(); play.click(); }
    }
  });
  // A click inside a caller line makes it the current line too.
  document.addEventListener("click", function (event) {
    var li = event.target.closest && event.target.closest("ol.lines[data-keys] > li.line.caller");
    if (li) { mark(li, false); }
  });
  // After htmx swaps a line's row: keep it current, put the cursor in the expected-text box of a flag form that
  // just opened, and give focus back to the line when its form closed (a results poll inside a row moves nothing).
  document.addEventListener("htmx:afterSettle", function (event) {
    var li = event.target;
    if (!li.matches || !li.matches("ol.lines[data-keys] > li.line")) { return; }
    var box = li.querySelector("form.flag-form textarea[name=expected_text]");
    if (box) {
      mark(li, false);
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
    } else if (li.id === currentId) {
      mark(li, !document.activeElement || document.activeElement === document.body);
    }
  });
})();
