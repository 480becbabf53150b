import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import software.amazon.event.ruler.Machine;

/**
 * Prints AWS event-ruler's verdict for each case of an event-pattern cases file, one line per case, in order:
 * "true", "false", or "error" followed by a tab and a message when event-ruler rejects the pattern or event,
 * or gives different verdicts for the same case.
 *
 * <p>The cases file is a JSON array of objects with "pattern" and "event" members (other members are ignored).
 * Each case is compiled into fresh Machines and matched with rulesForJSONEvent, the array-consistent matcher
 * that Ruler.matchesRule also uses. It is matched several times, each with a new Machine, because event-ruler
 * is not deterministic for some patterns (a Machine's verdict can depend on hash ordering), and a case whose
 * answer depends on luck is no reference.
 *
 * <p>Run as a single-file source program: java -cp 'LIBDIR/*' RulerCheck.java CASES.json
 */
public class RulerCheck {
  private static final int RUNS = 8;

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: java -cp 'LIBDIR/*' RulerCheck.java CASES.json");
      System.exit(2);
    }
    ObjectMapper mapper = new ObjectMapper();
    JsonNode cases = mapper.readTree(new File(args[0]));
    if (!cases.isArray()) {
      System.err.println(args[0] + ": expected a JSON array of cases");
      System.exit(2);
    }
    StringBuilder out = new StringBuilder();
    for (JsonNode c : cases) {
      out.append(verdict(mapper, c.get("pattern"), c.get("event"))).append('\n');
    }
    System.out.print(out);
    System.out.flush();
  }

  private static String verdict(ObjectMapper mapper, JsonNode pattern, JsonNode event) {
    if (pattern == null || event == null) return "error\tcase lacks a pattern or an event";
    try {
      String rule = mapper.writeValueAsString(pattern);
      String json = mapper.writeValueAsString(event);
      Boolean first = null;
      for (int run = 0; run < RUNS; run++) {
        Machine machine = Machine.builder().build();
        machine.addRule("rule", rule);
        boolean matched = !machine.rulesForJSONEvent(json).isEmpty();
        if (first == null) first = matched;
        else if (first != matched) return "error\tunstable: event-ruler answered both true and false";
      }
      return first.toString();
    } catch (Exception | StackOverflowError e) {
      String message = String.valueOf(e.getMessage()).replaceAll("\\s+", " ");
      return "error\t" + e.getClass().getSimpleName() + ": " + message;
    }
  }
}
