// Starts AWS's DynamoDB Local in memory, listening only on 127.0.0.1.
//
// Run as a single-file source program (JEP 330), with DynamoDB Local's jars on
// the class path and sqlite4java's native library on java.library.path:
//
//   java -Djava.library.path=LIB -cp 'LIB/*' Launcher.java PORT [HOST]
//
// PORT 0 picks a free port. When the server listens, one line "READY <port>"
// is printed on stdout; everything DynamoDB Local itself prints goes to
// stderr. The process exits when its stdin reaches end of file, so that it
// never outlives the parent that holds the other end of the pipe.
//
// DynamoDB Local has no -host option: DynamoDBProxyServer builds a Jetty
// `new Server(port)`, whose single ServerConnector binds every interface. The
// server is created here without being started, its private `server` field is
// read by reflection, and the connector's host (and port) are set before
// start.

import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class Launcher {
  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    String host = args.length > 1 ? args[1] : "127.0.0.1";
    if (port < 0 || port > 65535) fail("invalid port " + port);

    // Keep stdout for the READY line only.
    PrintStream out = System.out;
    System.setOut(System.err);

    watchStdin();

    // DynamoDB Local validates -port; the connector's real port is set below.
    String cliPort = String.valueOf(port == 0 ? 8000 : port);
    DynamoDBProxyServer proxy =
        ServerRunner.createServerFromCommandLineArgs(
            new String[] {"-inMemory", "-sharedDb", "-disableTelemetry", "-port", cliPort});

    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length != 1 || !(connectors[0] instanceof ServerConnector)) {
      fail("unexpected Jetty connectors: " + java.util.Arrays.toString(connectors));
    }
    ServerConnector connector = (ServerConnector) connectors[0];
    connector.setHost(host);
    connector.setPort(port);

    // safeStart() is Jetty's start() without DynamoDB Local's telemetry call,
    // and lets a bind failure through instead of printing and carrying on.
    try {
      proxy.safeStart();
    } catch (Exception e) {
      Throwable cause = e.getCause();
      fail(
          "could not listen on "
              + host
              + ":"
              + port
              + ": "
              + e.getMessage()
              + (cause != null ? " (" + cause.getMessage() + ")" : ""));
    }
    int actual = connector.getLocalPort();
    if (actual <= 0) fail("DynamoDB Local did not open its port");

    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    proxy.stop();
                  } catch (Exception ignored) {
                    // exiting anyway
                  }
                }));

    out.println("READY " + actual);
    out.flush();
    proxy.join();
  }

  /** Exits when stdin closes: the parent has gone (or asked us to stop). */
  private static void watchStdin() {
    Thread watcher =
        new Thread(
            () -> {
              InputStream in = System.in;
              byte[] buffer = new byte[256];
              try {
                while (in.read(buffer) != -1) {
                  // ignore input; only end of file matters
                }
              } catch (Exception ignored) {
                // a broken pipe means the same as end of file
              }
              // Give Jetty's shutdown a moment, then go regardless.
              Thread killer =
                  new Thread(
                      () -> {
                        try {
                          Thread.sleep(3000);
                        } catch (InterruptedException ignored) {
                          // halting now
                        }
                        Runtime.getRuntime().halt(0);
                      },
                      "stdin-eof-halt");
              killer.setDaemon(true);
              killer.start();
              System.exit(0);
            },
            "stdin-eof-watch");
    watcher.setDaemon(true);
    watcher.start();
  }

  private static void fail(String message) {
    System.err.println("Launcher: " + message);
    System.exit(1);
  }
}
