/**
 * A resource template's `list` callback: its resources join `resources/list` after the server's
 * own, paged with the server's sealed cursors (MCP 2025-11-25 pagination). Two servers sharing
 * `cursorSecret` stand for two nodes: each page is fetched from the other node, with both official
 * clients (`@modelcontextprotocol/sdk` 1.x on 2025-11-25, `@modelcontextprotocol/client` 2.x on
 * 2026-07-28). The template pages by its own cursor (5 cities a page) while the server's pages
 * hold 4 entries, so a server page starts inside a template page. A forged or foreign cursor is
 * -32602; the template's own cursor is only ever handed back to it; a listed resource reads
 * through the template.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import {
  createMcpServer,
  defineResource,
  defineResourceTemplate,
  type McpServer,
} from "../../src/index.js";

const CITIES = [
  "Athens",
  "Bergen",
  "Cork",
  "Dijon",
  "Essen",
  "Faro",
  "Graz",
  "Hanoi",
  "Izmir",
  "Jena",
  "Kobe",
  "Lima",
];
const SECRET = "cursor secret shared by both nodes, 32+ bytes";
/** Every cursor the template's `list` was handed. */
const handed: (string | undefined)[] = [];

const cities = defineResourceTemplate({
  uriTemplate: "city://{name}",
  name: "city",
  mimeType: "text/plain",
  list: ({ cursor }) => {
    handed.push(cursor);
    const start = cursor === undefined ? 0 : Number(cursor.slice("page-".length));
    const next = start + 5;
    return {
      resources: CITIES.slice(start, next).map((name) => ({ uri: `city://${name}`, name })),
      ...(next < CITIES.length ? { nextCursor: `page-${next}` } : {}),
    };
  },
  read: ({ variables }) => `Welcome to ${variables.name}`,
});

const rivers = defineResourceTemplate({
  uriTemplate: "river://{name}",
  name: "river",
  // All at once, as an array.
  list: () => [
    { uri: "river://Danube", name: "Danube", description: "Long" },
    { uri: "river://Rhine", name: "Rhine" },
  ],
  read: ({ variables }) => `The ${variables.name}`,
});

const unlisted = defineResourceTemplate({
  uriTemplate: "lake://{name}",
  name: "lake",
  read: () => "water",
});

const statics = ["doc://a", "doc://b", "doc://c"].map((uri) =>
  defineResource({ uri, name: uri.slice(-1), read: () => uri }),
);

const EXPECTED = [
  ...statics.map((resource) => resource.uri),
  ...CITIES.map((name) => `city://${name}`),
  "river://Danube",
  "river://Rhine",
];

interface ListingClient {
  listResources(params?: { cursor?: string }): Promise<{
    resources: { uri: string; name: string; mimeType?: string; description?: string }[];
    nextCursor?: string;
  }>;
  readResource(params: { uri: string }): Promise<{ contents: { text?: string }[] }>;
  close(): Promise<void>;
}

const ERAS = {
  "2025-11-25 (sdk 1.x)": async (url: string): Promise<ListingClient> => {
    const client = new LegacyClient({ name: "list-legacy", version: "1.0.0" });
    await client.connect(new LegacyTransport(new URL(url)));
    return client as unknown as ListingClient;
  },
  "2026-07-28 (client 2.x)": async (url: string): Promise<ListingClient> => {
    const client = new ModernClient(
      { name: "list-modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(new URL(url)));
    return client as unknown as ListingClient;
  },
} as const;

describe("resource template list callbacks in resources/list, across two nodes", () => {
  let nodeA: McpServer;
  let nodeB: McpServer;
  let urls: [string, string];
  const errors: unknown[] = [];

  before(async () => {
    const options = {
      resources: statics,
      resourceTemplates: [cities, rivers, unlisted],
      pageSize: 4,
      cursorSecret: SECRET,
      onError: (error: unknown) => {
        errors.push(error);
      },
    };
    nodeA = createMcpServer(options);
    nodeB = createMcpServer(options);
    const a = await nodeA.listen({ host: "127.0.0.1", port: 0 });
    const b = await nodeB.listen({ host: "127.0.0.1", port: 0 });
    urls = [a.url, b.url];
  });
  after(() => Promise.all([nodeA.close(), nodeB.close()]));

  /**
   * Walks the list page by page, each page from the other node; the first page comes from
   * `first` (the 2.x client, called without a cursor, walks every page itself, so its walk starts
   * from a cursor: the scope, the client's IP bucket, is the same in both eras).
   */
  async function walk(
    clients: readonly ListingClient[],
    first: ListingClient,
  ): Promise<{ seen: string[]; pages: number }> {
    const seen: string[] = [];
    let page = await first.listResources({});
    let pages = 1;
    for (;;) {
      assert.ok(page.resources.length <= 4, `page ${pages}: ${page.resources.length} entries`);
      seen.push(...page.resources.map((resource) => resource.uri));
      const cursor = page.nextCursor;
      if (cursor === undefined || pages >= 20) break;
      page = await (clients[pages % 2] as ListingClient).listResources({ cursor });
      pages++;
    }
    return { seen, pages };
  }

  for (const [era, connect] of Object.entries(ERAS)) {
    test(`${era}: every page from the other node, in order, each of at most 4 entries`, async () => {
      const clients = [await connect(urls[0]), await connect(urls[1])];
      const legacy = await ERAS["2025-11-25 (sdk 1.x)"](urls[1]);
      try {
        handed.length = 0;
        const { seen, pages } = await walk(clients, legacy);
        assert.deepEqual(seen, EXPECTED);
        assert.equal(pages, 5, "17 entries in pages of 4");
        // The template got back only the cursors it made, and was asked again for a page a
        // server page started inside of.
        assert.ok(
          handed.every((c) => c === undefined || /^page-(5|10)$/.test(c)),
          String(handed),
        );
        assert.deepEqual([...new Set(handed)], [undefined, "page-5", "page-10"]);
        // A listed resource reads through its template.
        const read = await (clients[0] as ListingClient).readResource({ uri: "city://Graz" });
        assert.equal(read.contents[0]?.text, "Welcome to Graz");
      } finally {
        await Promise.all([...clients, legacy].map((client) => client.close()));
      }
    });
  }

  test("2026-07-28 (client 2.x): listResources() without a cursor walks every page itself", async () => {
    const client = await ERAS["2026-07-28 (client 2.x)"](urls[0]);
    try {
      const all = await client.listResources();
      assert.deepEqual(
        all.resources.map((resource) => resource.uri),
        EXPECTED,
      );
    } finally {
      await client.close();
    }
  });

  test("entries: the template's mimeType by default, the listed fields as given", async () => {
    const client = await ERAS["2026-07-28 (client 2.x)"](urls[0]);
    try {
      const all = (await client.listResources()).resources;
      assert.equal(all.find((r) => r.uri === "city://Kobe")?.mimeType, "text/plain");
      assert.deepEqual(
        all.find((r) => r.uri === "river://Danube"),
        {
          uri: "river://Danube",
          name: "Danube",
          description: "Long",
        },
      );
    } finally {
      await client.close();
    }
  });

  test("a forged or malformed cursor is -32602 and never reaches the template", async () => {
    const forged = Buffer.from(JSON.stringify(["t", "city://{name}", "page-999", 0])).toString(
      "base64url",
    );
    const client = await ERAS["2025-11-25 (sdk 1.x)"](urls[1]);
    try {
      for (const cursor of [`${forged}.AAAAAAAAAAAAAAAAAAAAAA`, "nonsense", forged]) {
        await assert.rejects(client.listResources({ cursor }), (error: unknown) => {
          const { code, message } = error as { code?: number; message: string };
          assert.equal(code, -32602, message);
          assert.match(message, /Invalid cursor/);
          return true;
        });
      }
    } finally {
      await client.close();
    }
    assert.ok(!handed.includes("page-999"), "a forged position never reaches the template");
  });

  test("a list callback that returns a URI its template does not match is a server error, reported", async () => {
    const server = createMcpServer({
      resourceTemplates: [
        defineResourceTemplate({
          uriTemplate: "good://{id}",
          name: "good",
          list: () => [{ uri: "evil://elsewhere", name: "x" }],
          read: () => "",
        }),
      ],
      onError: (error) => {
        errors.push(error);
      },
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    const client = await ERAS["2025-11-25 (sdk 1.x)"](url);
    try {
      await assert.rejects(client.listResources(), (error: unknown) => {
        const { code, message } = error as { code?: number; message: string };
        assert.equal(code, -32603);
        assert.doesNotMatch(message, /evil/, "the bug's details stay on the server");
        return true;
      });
      assert.ok(
        errors.some((error) => error instanceof TypeError && /must match good/.test(error.message)),
      );
    } finally {
      await client.close();
      await server.close();
    }
  });
});
