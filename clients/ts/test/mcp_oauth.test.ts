// signInMCP against the real sidecar binary and a local OAuth stub: an
// MCP server that answers 401 with RFC 9728 metadata, and an authorization
// server whose consent is refused.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { test } from "node:test";

import { SidecarError, type Notifications } from "../src/node.js";
import { deadline, start } from "./helpers.js";

const client = { name: "ts-oauth-test", version: "0.0.0" };

async function listen(s: Server): Promise<string> {
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

/** The protected MCP server and its authorization server (consent refused). */
async function oauthStub(): Promise<{ resource: string; issuer: string; close: () => void }> {
  let issuer = "";
  let resource = "";
  const json = (res: import("node:http").ServerResponse, status: number, v: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(v));
  };
  const as = createServer((req, res) => {
    const u = new URL(req.url ?? "/", issuer);
    if (u.pathname === "/.well-known/oauth-authorization-server") {
      return json(res, 200, {
        issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`, response_types_supported: ["code"], code_challenge_methods_supported: ["S256"],
      });
    }
    if (u.pathname === "/register" && req.method === "POST") return json(res, 201, { client_id: "ts-client", token_endpoint_auth_method: "none" });
    if (u.pathname === "/authorize") {
      const back = new URL(u.searchParams.get("redirect_uri")!);
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("state", u.searchParams.get("state") ?? "");
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    json(res, 404, { error: "not_found" });
  });
  const rs = createServer((req, res) => {
    if (req.url === "/.well-known/oauth-protected-resource/mcp") return json(res, 200, { resource: `${resource}/mcp`, authorization_servers: [issuer] });
    res.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${resource}/.well-known/oauth-protected-resource/mcp"` });
    res.end("unauthorized");
  });
  issuer = await listen(as);
  resource = await listen(rs);
  return {
    resource, issuer,
    close: () => {
      as.closeAllConnections();
      rs.closeAllConnections();
      as.close();
      rs.close();
    },
  };
}

test("signInMCP: the URL is the authorization server's; a refused consent rejects with the reason and the server stays needs_auth", async (t) => {
  const stub = await oauthStub();
  t.after(() => stub.close());
  const env = await start([]);
  t.after(() => env.sidecar.stop());
  mkdirSync(join(env.projDir, ".agent"));
  writeFileSync(join(env.projDir, ".agent", "mcp.json"), JSON.stringify({ servers: [{ name: "remote", type: "http", url: `${stub.resource}/mcp` }] }));
  const c = await env.sidecar.connect({ client });
  t.after(() => c.close());

  const { projectId } = await c.call("project.open", { path: env.projDir });
  const needsAuth = new Promise<Notifications["mcp.status"]>((resolve) => {
    const off = c.on("mcp.status", (st) => {
      if (st.name === "remote" && st.state === "needs_auth") {
        off();
        resolve(st);
      }
    });
  });
  const list = await c.call("mcp.list", { projectId });
  const remote = list.servers.find((s) => s.name === "remote")!;
  await c.call("mcp.trust", { projectId, name: "remote", hash: remote.hash! });
  await deadline(needsAuth, "needs_auth");

  let opened: URL | undefined;
  const err = await c
    .signInMCP({ projectId, name: "remote" }, async (url) => {
      opened = url;
      const page = await fetch(url); // the browser: the stub redirects to the loopback callback
      assert.equal(page.status, 400);
    })
    .catch((e: unknown) => e);
  assert.ok(err instanceof SidecarError, String(err));
  assert.match(err.message, /access_denied/);
  assert.equal(opened?.host, new URL(stub.issuer).host);
  assert.equal(opened?.searchParams.get("code_challenge_method"), "S256");
  const after = await c.call("mcp.list", { projectId });
  const st = after.servers.find((s) => s.name === "remote")!;
  assert.equal(st.state, "needs_auth");
  assert.match(st.lastError ?? "", /refused the sign-in/);
});
