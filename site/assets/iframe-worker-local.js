/* Web workers for pages opened from file:// (written for this site; the name keeps mkdocs-material's offline
   plugin from adding its own shim from a CDN). A browser refuses `new Worker(url)` on a file:// page, so the
   theme's search would stay on "Initializing search". Here, only on file://, Worker is replaced by a hidden
   same-origin frame that runs the worker's script: the frame's `postMessage` is routed to this Worker's
   listeners, and the page's messages are dispatched in the frame as "message" events. Over http(s) nothing
   changes. */
(function () {
  "use strict";
  if (location.protocol !== "file:") { return; }

  function FrameWorker(url) {
    var self = this, frame = document.createElement("iframe"), queue = [], ready = false;
    this.onmessage = null;
    this.onerror = null;
    this._listeners = {};
    frame.setAttribute("aria-hidden", "true");
    frame.setAttribute("tabindex", "-1");
    frame.style.display = "none";
    frame.srcdoc = "<!doctype html><title>worker</title>";
    frame.addEventListener("load", function () {
      var win = frame.contentWindow, script = win.document.createElement("script");
      win.postMessage = function (data) { self._emit("message", { data: data }); };
      win.onerror = function (msg) { self._emit("error", { message: String(msg) }); };
      script.onload = function () {
        ready = true;
        queue.forEach(function (data) { self._deliver(data); });
        queue = [];
      };
      script.onerror = function () { self._emit("error", { message: "cannot load " + url }); };
      script.src = new URL(url, location.href).href;
      win.document.head.appendChild(script);
    });
    this._frame = frame;
    this._queue = function (data) { if (ready) { self._deliver(data); } else { queue.push(data); } };
    (document.body || document.documentElement).appendChild(frame);
  }
  FrameWorker.prototype._deliver = function (data) {
    var win = this._frame.contentWindow;
    win.dispatchEvent(new win.MessageEvent("message", { data: data }));
  };
  FrameWorker.prototype._emit = function (type, init) {
    var event = type === "message" ? new MessageEvent("message", init) : new ErrorEvent("error", init);
    var handler = type === "message" ? this.onmessage : this.onerror;
    if (typeof handler === "function") { handler.call(this, event); }
    (this._listeners[type] || []).slice().forEach(function (fn) { fn.call(this, event); }, this);
  };
  FrameWorker.prototype.postMessage = function (data) { this._queue(data); };
  FrameWorker.prototype.addEventListener = function (type, fn) {
    (this._listeners[type] = this._listeners[type] || []).push(fn);
  };
  FrameWorker.prototype.removeEventListener = function (type, fn) {
    this._listeners[type] = (this._listeners[type] || []).filter(function (f) { return f !== fn; });
  };
  FrameWorker.prototype.terminate = function () {
    if (this._frame.parentNode) { this._frame.parentNode.removeChild(this._frame); }
  };
  window.Worker = FrameWorker;
})();
