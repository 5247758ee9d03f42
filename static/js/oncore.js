// One shared player for every "Play" button: a second click on the same button stops it.
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
  window.oncorePlay = function (button) {
    if (!button.dataset.label) { button.dataset.label = button.textContent; }
    if (current === button) { player.pause(); reset(); return; }
    reset();
    current = button;
    player.src = button.dataset.src;
    button.textContent = "■ Stop";
    button.setAttribute("aria-pressed", "true");
    player.play().catch(function () {});
  };
})();
