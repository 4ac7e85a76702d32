// Settings: each field is saved when it changes; the worker validates (all or nothing) and
// its message is shown beside the field. The session-start context preview for a chosen
// project is rendered again after every change.

import { api } from "./api.js";
import { el } from "./dom.js";

function input(spec, value) {
  const id = `setting-${spec.key}`;
  if (spec.kind === "bool") return el("input", { id, type: "checkbox", checked: Boolean(value) });
  if (spec.kind === "choice") {
    return el("select", { id }, spec.choices.map((choice) =>
      el("option", { value: choice, text: choice, selected: choice === value })));
  }
  if (spec.kind === "int") {
    return el("input", { id, type: "number", min: spec.minimum ?? undefined,
      max: spec.maximum ?? undefined, step: "1", value: String(value) });
  }
  if (spec.secret) {
    return el("input", { id, type: "password", autocomplete: "off",
      placeholder: value ? "set (hidden): type to replace" : "not set", value: "" });
  }
  return el("input", { id, type: "text", value: String(value ?? ""), spellcheck: "false" });
}

const valueOf = (spec, field) =>
  spec.kind === "bool" ? field.checked : spec.kind === "int" ? field.value.trim() : field.value;

export async function settingsView(meta, projects) {
  const view = await api("/api/settings");
  const preview = el("pre", { class: "preview", id: "context-preview", tabindex: "0" });
  const picker = el("select", { id: "preview-project" },
    projects.map((p) => el("option", { value: p.name, text: p.name })));
  const previewStatus = el("p", { class: "hint", role: "status" });
  const refreshPreview = async () => {
    if (!picker.value) {
      preview.textContent = "No project has memory yet.";
      return;
    }
    previewStatus.textContent = "Rendering…";
    try {
      preview.textContent = await api("/api/context/inject", {
        params: { project: picker.value }, text: true });
      previewStatus.textContent = `What a new session in ${picker.value} would be given.`;
    } catch (error) {
      previewStatus.textContent = `Preview failed: ${error.message}`;
    }
  };
  picker.addEventListener("change", refreshPreview);

  const problems = el("ul", { class: "problems", role: "alert" },
    view.problems.map((problem) => el("li", { text: problem })));
  const rows = meta.settings.map((spec) => {
    const field = input(spec, view.values[spec.key]);
    const message = el("p", { class: "field-message", id: `${field.id}-message`, role: "status" });
    field.setAttribute("aria-describedby", `${field.id}-doc ${field.id}-message`);
    const hint = el("p", { class: "hint", id: `${field.id}-doc` });
    const showSource = (sources) => {
      hint.textContent = `${spec.doc} (from ${sources[spec.key] || "default"})`;
    };
    showSource(view.sources);
    field.addEventListener("change", async () => {
      const value = valueOf(spec, field);
      if (spec.secret && value === "") return;
      message.textContent = "Saving…";
      message.className = "field-message";
      try {
        const saved = await api("/api/settings", { method: "POST",
          body: { values: { [spec.key]: value } } });
        message.textContent = saved.sources[spec.key] === "env"
          ? "Saved, but an environment variable overrides it."
          : "Saved.";
        field.setAttribute("aria-invalid", "false");
        showSource(saved.sources);
        problems.replaceChildren(...saved.problems.map((p) => el("li", { text: p })));
        refreshPreview();
      } catch (error) {
        message.textContent = error.message;
        message.className = "field-message error";
        field.setAttribute("aria-invalid", "true");
      }
    });
    return el("div", { class: `setting setting-${spec.kind}`, "data-key": spec.key },
      el("label", { for: field.id, text: spec.key }),
      field,
      hint,
      message);
  });
  refreshPreview();
  return {
    title: "Settings",
    body: [
      problems,
      el("section", { class: "detail-section" },
        el("h3", { text: "Context preview" }),
        el("label", { for: "preview-project", text: "Project " }), picker, previewStatus, preview),
      el("section", { class: "detail-section settings-form" },
        el("h3", { text: "Settings (saved as you change them)" }), rows),
    ],
  };
}
