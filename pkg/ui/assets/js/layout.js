// A small force-directed layout for the association graph, in the manner
// of Fruchterman and Reingold: nearby nodes repel each other, edges are
// springs that keep their ends about one unit apart, a weak pull holds
// everything near the middle, and the moves shrink as the layout cools. It starts from
// a radial placement (the centre in the middle, each ring one hop
// further), runs a fixed number of rounds and uses no randomness, so the
// same graph is always drawn the same way.

// layout places nodes (ids) joined by edges ([source, target]) in a
// width × height box and returns a Map id -> {x, y, depth}. center, when
// given, is kept in the middle.
export function layout(ids, edges, center, width, height) {
  const n = ids.length;
  const pos = new Map();
  if (n === 0) return pos;
  const index = new Map(ids.map((id, i) => [id, i]));
  const links = edges
    .map(([a, b]) => [index.get(a), index.get(b)])
    .filter(([a, b]) => a !== undefined && b !== undefined && a !== b);
  const adj = ids.map(() => []);
  for (const [a, b] of links) {
    adj[a].push(b);
    adj[b].push(a);
  }

  // Rings by hops from the centre (or from the first node).
  const root = index.has(center) ? index.get(center) : 0;
  const depth = ids.map(() => -1);
  depth[root] = 0;
  const queue = [root];
  for (let q = 0; q < queue.length; q++) {
    for (const v of adj[queue[q]]) {
      if (depth[v] < 0) {
        depth[v] = depth[queue[q]] + 1;
        queue.push(v);
      }
    }
  }
  const maxDepth = Math.max(0, ...depth);
  for (let i = 0; i < n; i++) if (depth[i] < 0) depth[i] = maxDepth + 1;
  const rings = new Map();
  depth.forEach((d, i) => {
    if (!rings.has(d)) rings.set(d, []);
    rings.get(d).push(i);
  });

  const cx = width / 2;
  const cy = height / 2;
  const ringGap = Math.min(width, height) / (2 * (Math.max(...rings.keys()) + 1.5));
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (const [d, members] of rings) {
    members.forEach((i, k) => {
      // Golden-angle steps: no two nodes of a ring start exactly opposite
      // each other, where symmetric forces would keep them in a line.
      const a = k * 2.39996 + d * 0.5;
      x[i] = cx + d * ringGap * Math.cos(a);
      y[i] = cy + d * ringGap * Math.sin(a);
    });
  }

  const k = Math.min(110, Math.sqrt((width * height) / n) * 0.6);
  const rounds = 250;
  let temp = Math.min(width, height) / 8;
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  for (let r = 0; r < rounds; r++) {
    dx.fill(0);
    dy.fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let ex = x[i] - x[j];
        let ey = y[i] - y[j];
        let d2 = ex * ex + ey * ey;
        if (d2 < 0.01) {
          // Two nodes on one spot: part them along a fixed direction.
          ex = 0.1 * (1 + (i % 3));
          ey = 0.1 * (1 + (j % 3));
          d2 = ex * ex + ey * ey;
        }
        // Far apart nodes no longer push: parts that are not connected
        // stay near each other instead of flying apart.
        if (d2 > 9 * k * k) continue;
        const f = (k * k) / d2;
        dx[i] += ex * f;
        dy[i] += ey * f;
        dx[j] -= ex * f;
        dy[j] -= ey * f;
      }
    }
    for (const [a, b] of links) {
      const ex = x[a] - x[b];
      const ey = y[a] - y[b];
      // A spring whose rest length is k: it pulls when longer and
      // pushes when shorter, so well-linked groups do not collapse.
      const d = Math.sqrt(ex * ex + ey * ey) || 0.01;
      const f = (0.3 * (d - k)) / d;
      dx[a] -= ex * f;
      dy[a] -= ey * f;
      dx[b] += ex * f;
      dy[b] += ey * f;
    }
    for (let i = 0; i < n; i++) {
      // A weak pull to the middle keeps parts that are not connected
      // from drifting away.
      dx[i] += (cx - x[i]) * 0.05;
      dy[i] += (cy - y[i]) * 0.05;
      const len = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) || 1;
      const step = Math.min(len, temp);
      x[i] += (dx[i] / len) * step;
      y[i] += (dy[i] / len) * step;
    }
    if (index.has(center)) {
      x[root] = cx;
      y[root] = cy;
    }
    temp *= 0.98;
  }

  // Fit the drawing into the box with a margin.
  const margin = 40;
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    minX = Math.min(minX, x[i]);
    maxX = Math.max(maxX, x[i]);
    minY = Math.min(minY, y[i]);
    maxY = Math.max(maxY, y[i]);
  }
  const sx = maxX > minX ? (width - 2 * margin) / (maxX - minX) : 1;
  const sy = maxY > minY ? (height - 2 * margin) / (maxY - minY) : 1;
  // Shrink a large drawing to fit; never blow a small one up.
  const sc = Math.min(sx, sy, 1);
  const ox = (width - (maxX - minX) * sc) / 2;
  const oy = (height - (maxY - minY) * sc) / 2;
  ids.forEach((id, i) => {
    pos.set(id, {
      x: n === 1 ? cx : ox + (x[i] - minX) * sc,
      y: n === 1 ? cy : oy + (y[i] - minY) * sc,
      depth: depth[i],
    });
  });
  return pos;
}
