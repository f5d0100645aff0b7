// The API key of a hub with keys, as both of its pages ask for it: once, in the page's
// #key-form (a form with an input #key), kept in this browser tab's session only and sent
// as "Authorization: Bearer <key>". A refused key is forgotten and asked for again.
var hubKey = (function () {
  "use strict";
  var SLOT = "chaja-hub-key";
  return {
    held: function () { return sessionStorage.getItem(SLOT); },
    forget: function () { sessionStorage.removeItem(SLOT); },
    headers: function (extra) {                       // the request's headers, with the key when one is held
      var h = Object.assign({}, extra || {}), key = sessionStorage.getItem(SLOT);
      if (key) h.Authorization = "Bearer " + key;
      return h;
    },
    ask: function (then) {                            // show the form; on submit keep the key and go on
      var form = document.getElementById("key-form"), input = document.getElementById("key");
      form.hidden = false;
      input.value = "";                               // a refused key is not offered again
      input.focus();
      form.onsubmit = function (event) {
        event.preventDefault();
        sessionStorage.setItem(SLOT, input.value);
        form.hidden = true;
        then();
      };
    }
  };
})();
