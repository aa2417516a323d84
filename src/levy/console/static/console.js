// The console works without this file; it only adds the copy buttons and, on a phone, closes
// the filters that are open on a wide screen (the first rows of the list on the first screen).
document.querySelectorAll("details[data-closed-on-phone]").forEach(function (details) {
  if (window.matchMedia("(max-width: 40rem)").matches) details.open = false;
});
document.addEventListener("click", function (event) {
  var button = event.target.closest("button[data-copy]");
  if (!button) return;
  var field = document.getElementById(button.getAttribute("data-copy"));
  if (!field) return;
  field.select();
  var done = function () { button.textContent = "Copied"; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand("copy"); done(); });
  } else {
    document.execCommand("copy");
    done();
  }
});
