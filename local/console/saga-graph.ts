import type { AslDefinition } from '../stepfunctions/definitions';

/**
 * The saga console's picture of a state machine: its states as a graph laid
 * out from the ASL (nodes, the edges between them, and their kinds), drawn
 * by the page and coloured by what happened to each state (saga-view.ts).
 */

/** What happened to a state in one execution, as the console colours it. */
export type StateOutcome = 'succeeded' | 'failed' | 'compensated' | 'not-reached' | 'running';

/** How a state leads to another: `catch` edges are the ones taken on an error. */
export type EdgeKind = 'next' | 'choice' | 'default' | 'catch';

export interface GraphNode {
  readonly name: string;
  readonly type: string;
  readonly comment?: string;
  /** Reachable from StartAt only through a Catch: the saga's compensation path. */
  readonly compensation: boolean;
  readonly layer: number;
  readonly x: number;
  readonly y: number;
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly kind: EdgeKind;
  /** The errors a Catch edge takes, or the condition a Choice edge tests. */
  readonly label?: string;
}

export interface StateGraph {
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
  readonly width: number;
  readonly height: number;
  readonly nodeWidth: number;
  readonly nodeHeight: number;
}

export const NODE_WIDTH = 160;
export const NODE_HEIGHT = 44;
const COLUMN_GAP = 24;
const LAYER_GAP = 36;
const MARGIN = 16;

/** The transitions a state declares, in the order the ASL lists them. */
export function edgesOf(name: string, state: AslDefinition['States'][string]): GraphEdge[] {
  const edges: GraphEdge[] = [];
  const choices = Array.isArray(state.Choices) ? (state.Choices as Record<string, unknown>[]) : [];
  for (const choice of choices) {
    if (typeof choice.Next === 'string') {
      edges.push({ from: name, to: choice.Next, kind: 'choice', label: choiceLabel(choice) });
    }
  }
  if (typeof state.Default === 'string') edges.push({ from: name, to: state.Default, kind: 'default' });
  if (typeof state.Next === 'string') edges.push({ from: name, to: state.Next, kind: 'next' });
  const catchers = Array.isArray(state.Catch) ? (state.Catch as Record<string, unknown>[]) : [];
  for (const catcher of catchers) {
    if (typeof catcher.Next === 'string') {
      const errors = Array.isArray(catcher.ErrorEquals) ? catcher.ErrorEquals.join(', ') : '';
      edges.push({ from: name, to: catcher.Next, kind: 'catch', label: errors });
    }
  }
  return edges;
}

function choiceLabel(choice: Record<string, unknown>): string {
  const variable = typeof choice.Variable === 'string' ? choice.Variable : '';
  const test = Object.entries(choice).find(([key]) => key !== 'Variable' && key !== 'Next');
  return test ? `${variable} ${test[0]} ${JSON.stringify(test[1])}`.trim() : variable;
}

/**
 * Lays the top-level states out in layers from StartAt: a state's layer is
 * the longest path to it (back edges of a loop ignored), so every transition
 * goes down. In a layer the main path comes first and the compensation path
 * in columns of its own on the right; states are ordered by where their
 * predecessors stand, then as the ASL reaches them.
 */
export function stateGraph(definition: AslDefinition): StateGraph {
  const names = Object.keys(definition.States);
  const edges = names.flatMap((name) =>
    edgesOf(name, definition.States[name]!).filter((e) => e.to in definition.States),
  );
  const outgoing = new Map(names.map((n) => [n, edges.filter((e) => e.from === n)]));

  // The order the ASL reaches its states in, breadth first, and which are reached without a Catch.
  const discovery = new Map<string, number>();
  const reach = (withCatch: boolean) => {
    const seen = new Set<string>([definition.StartAt]);
    const queue = [definition.StartAt];
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (withCatch && !discovery.has(name)) discovery.set(name, discovery.size);
      for (const edge of outgoing.get(name) ?? []) {
        if ((withCatch || edge.kind !== 'catch') && !seen.has(edge.to)) {
          seen.add(edge.to);
          queue.push(edge.to);
        }
      }
    }
    return seen;
  };
  const mainPath = reach(false);
  reach(true);
  for (const name of names) if (!discovery.has(name)) discovery.set(name, discovery.size);

  // Back edges (to a state on the current depth-first path) close loops; the layering ignores them.
  const backEdges = new Set<GraphEdge>();
  const state = new Map<string, 'open' | 'done'>();
  const visit = (name: string) => {
    state.set(name, 'open');
    for (const edge of outgoing.get(name) ?? []) {
      const seen = state.get(edge.to);
      if (seen === 'open') backEdges.add(edge);
      else if (seen === undefined) visit(edge.to);
    }
    state.set(name, 'done');
  };
  for (const name of [definition.StartAt, ...names]) if (!state.has(name)) visit(name);

  const forward = edges.filter((e) => !backEdges.has(e));
  const layer = new Map(names.map((n) => [n, 0]));
  // Longest path: relax in topological order (Kahn's algorithm over the forward edges).
  const indegree = new Map(names.map((n) => [n, forward.filter((e) => e.to === n).length]));
  const ready = names.filter((n) => indegree.get(n) === 0);
  while (ready.length > 0) {
    const name = ready.shift()!;
    for (const edge of forward.filter((e) => e.from === name)) {
      layer.set(edge.to, Math.max(layer.get(edge.to)!, layer.get(name)! + 1));
      indegree.set(edge.to, indegree.get(edge.to)! - 1);
      if (indegree.get(edge.to) === 0) ready.push(edge.to);
    }
  }

  const layers: string[][] = Array.from({ length: Math.max(...layer.values()) + 1 }, () => []);
  for (const name of names) layers[layer.get(name)!]!.push(name);
  const column = new Map<string, number>();
  const ordered: string[][] = [];
  for (const members of layers) {
    const row = [...members];
    const centre = (name: string) => {
      const from = forward.filter((e) => e.to === name && column.has(e.from)).map((e) => column.get(e.from)!);
      return from.length === 0 ? 0 : from.reduce((a, b) => a + b, 0) / from.length;
    };
    row.sort((a, b) => centre(a) - centre(b) || discovery.get(a)! - discovery.get(b)!);
    row.forEach((name, i) => {
      column.set(name, i);
    });
    ordered.push(row);
  }
  // The compensation path gets the columns right of the widest main-path layer.
  const mainColumns = Math.max(1, ...ordered.map((row) => row.filter((n) => mainPath.has(n)).length));
  const nodes: GraphNode[] = [];
  ordered.forEach((row, depth) => {
    const main = row.filter((n) => mainPath.has(n));
    const compensation = row.filter((n) => !mainPath.has(n));
    const place = (name: string, slot: number) => {
      const s = definition.States[name]!;
      nodes.push({
        name,
        type: s.Type,
        ...(typeof s.Comment === 'string' ? { comment: s.Comment } : {}),
        compensation: !mainPath.has(name),
        layer: depth,
        x: MARGIN + slot * (NODE_WIDTH + COLUMN_GAP),
        y: MARGIN + depth * (NODE_HEIGHT + LAYER_GAP),
      });
    };
    main.forEach((name, i) => {
      place(name, i);
    });
    compensation.forEach((name, i) => {
      place(name, mainColumns + i);
    });
  });
  const width = Math.max(...nodes.map((n) => n.x)) + NODE_WIDTH + MARGIN;
  const height = Math.max(...nodes.map((n) => n.y)) + NODE_HEIGHT + MARGIN;
  return { nodes, edges, width, height, nodeWidth: NODE_WIDTH, nodeHeight: NODE_HEIGHT };
}
