// A "Copy" button copies the text of the field its data-copy names (a secret
// shown once: an invitation link) and says so beside it.
document.querySelectorAll("[data-copy]").forEach((button) => {
  button.addEventListener("click", async () => {
    const field = document.querySelector(button.dataset.copy);
    const status = document.getElementById("copy-status");
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      if (status) status.textContent = "Copied to the clipboard.";
    } catch (error) {
      if (status) status.textContent = "Select the link and copy it (the browser refused the clipboard).";
    }
  });
});
