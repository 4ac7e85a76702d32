// The worker's live event stream. Events are numbered; after any break the stream is
// reopened from the last number seen, and the worker replays exactly what was missed.

const MAX_BACKOFF_MS = 10_000;

export class LiveStream {
  constructor(onEvent, onState) {
    this.onEvent = onEvent;
    this.onState = onState;
    this.lastId = null;
    this.source = null;
    this.paused = false;
    this.backoff = 1000;
    this.timer = null;
  }

  open() {
    this.close();
    const resume = this.lastId === null ? "" : `?last_event_id=${this.lastId}`;
    const source = new EventSource(`/api/stream${resume}`);
    this.source = source;
    this.onState("connecting");
    source.onmessage = (message) => {
      if (message.lastEventId) this.lastId = Number(message.lastEventId);
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (event.type === "connected") {
        this.backoff = 1000;
        if (this.lastId !== null && event.last_id < this.lastId) {
          // A new worker numbers from 1 again: nothing can be resumed, start over.
          this.lastId = null;
          this.onEvent({ type: "reset" });
          this.open();
          return;
        }
        // A fresh stream starts at the worker's newest event: resume from there.
        this.lastId ??= event.last_id;
        this.onState("live");
      }
      this.onEvent(event);
    };
    source.onerror = () => {
      if (source !== this.source) return;
      if (source.readyState === EventSource.CLOSED) {
        // The browser gave up (worker down, or it answered with an error): retry ourselves.
        this.onState("offline");
        this.timer = setTimeout(() => this.open(), this.backoff);
        this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
      } else {
        this.onState("reconnecting");
      }
    };
  }

  close() {
    clearTimeout(this.timer);
    if (this.source) {
      this.source.onmessage = this.source.onerror = null;
      this.source.close();
      this.source = null;
    }
  }

  pause() {
    this.paused = true;
    this.close();
    this.onState("paused");
  }

  resume() {
    this.paused = false;
    this.open();
  }
}
