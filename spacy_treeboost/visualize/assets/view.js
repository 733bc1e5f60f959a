(function () {
  "use strict";
  function setup(view) {
    if (view.getAttribute("data-tb-ready")) { return; }
    view.setAttribute("data-tb-ready", "1");
    var selected = null;
    function show(key) {
      var items = view.querySelectorAll("[data-subtree]");
      for (var i = 0; i < items.length; i++) {
        items[i].classList.toggle("tb-on", key !== null && items[i].getAttribute("data-subtree") === key);
      }
      view.classList.toggle("tb-focus", key !== null);
    }
    function keyOf(event) {
      var item = event.target.closest ? event.target.closest("[data-subtree]") : null;
      return item && view.contains(item) ? item.getAttribute("data-subtree") : null;
    }
    view.addEventListener("mouseover", function (event) {
      var key = keyOf(event);
      if (key !== null) { show(key); }
    });
    view.addEventListener("mouseleave", function () { show(selected); });
    view.addEventListener("click", function (event) {
      var key = keyOf(event);
      selected = key === selected ? null : key;
      show(selected);
    });
    view.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") {
        var key = keyOf(event);
        if (key !== null) { event.preventDefault(); selected = key === selected ? null : key; show(selected); }
      }
    });
  }
  var views = document.querySelectorAll(".tb-view");
  for (var i = 0; i < views.length; i++) { setup(views[i]); }
})();
