// The dashboard's entry point: the gateway serves index.html at / and
// this bundle under /ui/; everything the page shows comes from /api.
import { render } from "preact";
import { App } from "./app";
import "./styles.css";

const root = document.getElementById("app");
if (root) render(<App />, root);
