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
