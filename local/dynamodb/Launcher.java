// Starts AWS's DynamoDB Local, in memory or on disk, listening only on 127.0.0.1.
//
// Compiled once into local/.cache/dynamodb-launcher by local/dynamodb.ts (at
// `npm ci`, or at the first start), and run with DynamoDB Local's jars on the
// class path and sqlite4java's native library on java.library.path:
//
//   java -Djava.library.path=LIB -cp 'LIB/*:CLASSES' Launcher PORT [HOST [DB_DIR]]
//
// Without DB_DIR the database is in memory (-inMemory); with it, DynamoDB
// Local keeps it in DB_DIR/shared-local-instance.db (-dbPath), stream records
// included, and a later start on the same DB_DIR finds every table, item and
// stream record as they were (see persistDurably for what a crash keeps).
//
// It also runs as a single-file source program (JEP 330), `... -cp 'LIB/*'
// Launcher.java PORT [HOST]`, at the cost of compiling it at every start.
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
//
// DynamoDB Local keeps every stream record of every table in one SQLite table
// (`us`, keyed by sequence number, kept 24 hours), and every GetRecords also
// asks it for the stream's first record by StreamID, with no index to answer
// from: each poll of a stream scanned every record of every table, so the
// server slowed as the tables grew (a 20,000-reservation flash sale fell from
// about 95 to about 37 reservations a second, its SQLite thread busy in those
// scans). Before the server takes requests the launcher creates the database
// and indexes the stream records by stream and by shard (see
// indexStreamRecords).
//
// It also puts the shared database in place itself (installSharedDatabase),
// so that two things DynamoDB Local redoes at every call are done once: its
// tables' metadata, read again from SQLite for every request
// (TableMetadataCache), and the TransactWriteItems machinery, with its own
// Jackson mapper, built for every transaction (TransactionsBuiltOnce).

import com.almworks.sqlite4java.SQLiteConnection;
import com.almworks.sqlite4java.SQLiteJob;
import com.almworks.sqlite4java.SQLiteQueue;
import com.amazonaws.services.dynamodbv2.datamodel.DocumentFactory;
import com.amazonaws.services.dynamodbv2.dbenv.DbEnv;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.dynamodb.services.exceptions.AWSExceptionFactory;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.AbstractLocalDynamoDBServerHandler;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;
import software.amazon.dynamodb.services.local.server.LocalDynamoDBRequestHandler;
import software.amazon.dynamodb.services.local.shared.access.LocalDBAccess;
import software.amazon.dynamodb.services.local.shared.access.LocalDBClient;
import software.amazon.dynamodb.services.local.shared.access.LocalDBInputConverter;
import software.amazon.dynamodb.services.local.shared.access.LocalDBOutputConverter;
import software.amazon.dynamodb.services.local.shared.access.TableInfo;
import software.amazon.dynamodb.services.local.shared.access.api.dp.TransactWriteItemsFunction;
import software.amazon.dynamodb.services.local.shared.access.client.LocalDynamoDbClient;
import software.amazon.dynamodb.services.local.shared.access.sqlite.SQLiteDBAccess;
import software.amazon.dynamodb.services.local.shared.jobs.JobsRegister;

public class Launcher {
  /**
   * The DynamoDB Local this launcher was written for (local/dynamodb/pom.xml
   * fetches it): it reads private fields of that version's classes and
   * indexes that version's SQLite schema, which another version may not
   * have. A unit test holds the pom to it; at start, another jar on the class
   * path ends the launcher with an error rather than a server half set up.
   */
  static final String DYNAMODB_LOCAL_VERSION = "3.3.1";

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    String host = args.length > 1 ? args[1] : "127.0.0.1";
    String dbDir = args.length > 2 ? args[2] : null;
    if (port < 0 || port > 65535) fail("invalid port " + port);
    checkDynamoDbLocalVersion();

    // Keep stdout for the READY line only.
    PrintStream out = System.out;
    System.setOut(System.err);

    watchStdin();
    ignoreInterrupt();

    // DynamoDB Local validates -port; the connector's real port is set below.
    String cliPort = String.valueOf(port == 0 ? 8000 : port);
    String[] storage = dbDir == null ? new String[] {"-inMemory"} : new String[] {"-dbPath", dbDir};
    String[] cli = new String[storage.length + 4];
    System.arraycopy(storage, 0, cli, 0, storage.length);
    System.arraycopy(
        new String[] {"-sharedDb", "-disableTelemetry", "-port", cliPort}, 0, cli, storage.length, 4);
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(cli);

    Server server = (Server) readField(proxy, DynamoDBProxyServer.class, "server");
    Connector[] connectors = server.getConnectors();
    if (connectors.length != 1 || !(connectors[0] instanceof ServerConnector)) {
      fail("unexpected Jetty connectors: " + java.util.Arrays.toString(connectors));
    }
    ServerConnector connector = (ServerConnector) connectors[0];
    connector.setHost(host);
    connector.setPort(port);
    sizeThreadPool(server);

    SQLiteQueue queue = installSharedDatabase(proxy);
    if (dbDir != null) persistDurably(queue);
    indexStreamRecords(queue);

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

  /** The name DynamoDB Local gives the database that -sharedDb serves every client from. */
  private static final String SHARED_DATABASE = "shared-local-instance";

  /**
   * Creates the shared database now, as DynamoDB Local would at the first
   * request (LocalDynamoDBRequestHandler.getHandler: the same SQLite file or
   * memory, the same jobs), but with its metadata reads cached and its
   * transactions' machinery built once; returns its one SQLite connection's
   * queue (the database's only way in).
   *
   * Why: a JFR profile of DynamoDB Local through a 25/s level of the load
   * mix put 13% of its samples in getTableInfo (the table's row in `dm`, its
   * schema's JSON and its stream's description, read for every call on the
   * one SQLite thread that every call queues for) and 4% in building a
   * TransactWriteItemsFunction (a new Jackson mapper with all its mix-ins)
   * per transaction. local/bench/dynamodb-local.ts --workload transact
   * --streams (6,000 calls, three interleaved rounds): 1.57–1.78 ms of CPU a
   * call as DynamoDB Local has it, 1.08–1.22 with the metadata cached,
   * 0.95–1.06 with the transactions built once, 0.77–0.91 with both.
   */
  private static SQLiteQueue installSharedDatabase(DynamoDBProxyServer proxy) throws Exception {
    Object serverHandler = readField(proxy, DynamoDBProxyServer.class, "serverHandler");
    Object requestHandler =
        readField(serverHandler, AbstractLocalDynamoDBServerHandler.class, "primaryHandler");
    Class<?> handlerClass = LocalDynamoDBRequestHandler.class;
    boolean inMemory = (Boolean) readField(requestHandler, handlerClass, "runInMemory");
    String dbDir = (String) readField(requestHandler, handlerClass, "dbFileLocation");
    boolean delayTransientStatuses =
        (Boolean) readField(requestHandler, handlerClass, "delayTransientStatuses");
    @SuppressWarnings("unchecked")
    Map<String, Object> databases =
        (Map<String, Object>) readField(requestHandler, handlerClass, "dbRequestHandlers");
    if (!databases.isEmpty()) fail("DynamoDB Local opened a database before the launcher");

    SQLiteDBAccess access =
        inMemory
            ? new SQLiteDBAccess()
            : new SQLiteDBAccess(
                LocalDynamoDBRequestHandler.generateDbFileRelativePath(dbDir, SHARED_DATABASE));
    JobsRegister jobs = new JobsRegister(Executors.newFixedThreadPool(10), delayTransientStatuses);
    databases.put(SHARED_DATABASE, new TransactionsBuiltOnce(TableMetadataCache.over(access), jobs));
    return (SQLiteQueue) readField(access, SQLiteDBAccess.class, "queue");
  }

  /**
   * DynamoDB Local's database access with getTableInfo cached per table.
   * A table's metadata changes only through the calls that are not in
   * KEEP_METADATA (CreateTable, DeleteTable, UpdateTable, UpdateTimeToLive,
   * an index's jobs, a shard's rollover, ...): any of those empties the cache
   * before and after it runs, so that the next read is the database's. A read
   * that overlapped such a call is returned but not kept (the generation
   * moved). Calls inside the access itself (its own getTableInfo) are not
   * cached: they bypass this proxy.
   */
  static final class TableMetadataCache implements InvocationHandler {
    /**
     * The calls that read or write items, streams or transactions, never a
     * table's metadata; and the three reads DynamoDB Local's own schedulers
     * (an index's creation and deletion, items' expiry) make every second.
     */
    private static final Set<String> KEEP_METADATA =
        Set.of(
            "getGSIsByStatusFromAllTables",
            "fetchAllTablesWithTimeToLiveEnabled",
            "numberOfSubscriberWideInflightOnlineCreateIndexesOperations",
            "getRecord",
            "deleteRecord",
            "putRecord",
            "queryRecords",
            "getTableItemCount",
            "getLSIItemCount",
            "getGSIItemCount",
            "getTableInfo",
            "getStreamInfo",
            "listTables",
            "getTableByteSize",
            "getLSIByteSize",
            "getGSIByteSize",
            "getLockForTable",
            "getStreamRecords",
            "getLatestSequenceNumberForShard",
            "getDeletionDateTimeForShard",
            "getEarliestNonExpiredSequenceNumberForShard",
            "getSequenceNumberStartForShard",
            "shardIsNotExpired",
            "beginTransaction",
            "commitTransaction",
            "rollbackTransaction");

    private final LocalDBAccess access;
    private final Map<String, TableInfo> tables = new ConcurrentHashMap<>();
    private final AtomicLong generation = new AtomicLong();

    private TableMetadataCache(LocalDBAccess access) {
      this.access = access;
    }

    static LocalDBAccess over(LocalDBAccess access) {
      return (LocalDBAccess)
          Proxy.newProxyInstance(
              Launcher.class.getClassLoader(),
              new Class<?>[] {LocalDBAccess.class},
              new TableMetadataCache(access));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      if (name.equals("getTableInfo")) return tableInfo((String) args[0]);
      // Object's own methods (toString, hashCode, equals) change no table.
      boolean changesMetadata =
          method.getDeclaringClass() != Object.class && !KEEP_METADATA.contains(name);
      if (changesMetadata) forget();
      try {
        return forward(access, method, args);
      } finally {
        if (changesMetadata) forget();
      }
    }

    private TableInfo tableInfo(String table) {
      TableInfo known = tables.get(table);
      if (known != null) return known;
      long before = generation.get();
      TableInfo read = access.getTableInfo(table);
      // null: no such table (yet); not kept, so that a CreateTable need not be awaited.
      if (read != null && generation.get() == before) tables.putIfAbsent(table, read);
      return read;
    }

    private void forget() {
      generation.incrementAndGet();
      tables.clear();
    }
  }

  /**
   * The shared database's client, whose DynamoDbClient runs every
   * TransactWriteItems through one TransactWriteItemsFunction instead of a
   * new one per call (its fields are final and its state per call is in
   * locals, like the Put/Update/Delete functions the client already shares).
   * Every other call goes to DynamoDB Local's own client unchanged.
   */
  static final class TransactionsBuiltOnce extends LocalDBClient {
    private final DynamoDbClient client;

    TransactionsBuiltOnce(LocalDBAccess access, JobsRegister jobs) throws Exception {
      super(access, jobs);
      DynamoDbClient own = super.dynamoDbClient();
      Class<?> owner = LocalDynamoDbClient.class;
      TransactWriteItemsFunction transactWriteItems =
          new TransactWriteItemsFunction(
              access,
              (LocalDBInputConverter) readField(own, owner, "inputConverter"),
              (LocalDBOutputConverter) readField(own, owner, "localDBOutputConverter"),
              new AWSExceptionFactory(),
              (DbEnv) readField(own, owner, "localDBEnv"),
              (DocumentFactory) readField(own, owner, "documentFactory"));
      this.client =
          (DynamoDbClient)
              Proxy.newProxyInstance(
                  Launcher.class.getClassLoader(),
                  new Class<?>[] {DynamoDbClient.class},
                  (proxy, method, args) ->
                      method.getName().equals("transactWriteItems")
                              && args != null
                              && args.length == 1
                              && args[0] instanceof TransactWriteItemsRequest request
                          ? transactWriteItems.apply(request)
                          : forward(own, method, args));
    }

    @Override
    public DynamoDbClient dynamoDbClient() {
      return client;
    }
  }

  /**
   * On disk: what DynamoDB Local has answered is in the database file when
   * the answer leaves, so a killed process (SIGKILL included) loses nothing
   * it acknowledged. SQLite writes each transaction to the file before it
   * commits; `synchronous = OFF` only skips the fsync that would also survive
   * the operating system's crash or a power loss, which a local cloud need
   * not (and which would cost a disk flush per write).
   */
  private static void persistDurably(SQLiteQueue queue) throws Exception {
    exec(queue, new String[] {"PRAGMA synchronous = OFF;"});
  }

  /**
   * Indexes the stream records by stream and by shard, for the first and
   * last record of a stream or shard (IF NOT EXISTS: a database on disk has
   * them from its first start).
   *
   * GetRecords itself (`WHERE StreamID = ? AND ShardID = ? AND SequenceNumber
   * >= ? ... ORDER BY SequenceNumber`) must keep reading from its sequence
   * number on: the bundled SQLite (3.8.7) cannot range over the sequence
   * number (the rowid) inside an index, so with the shard index it would read
   * the shard from its first record on every poll. The planner statistics
   * written here say that a stream or shard is most of the table, so that it
   * reads by sequence number there and uses the indexes for the first and last
   * records only.
   */
  private static void indexStreamRecords(SQLiteQueue queue) throws Exception {
    String[] statements = {
      "CREATE INDEX IF NOT EXISTS us_stream ON us (StreamID, SequenceNumber);",
      "CREATE INDEX IF NOT EXISTS us_shard ON us (ShardID, SequenceNumber);",
      "ANALYZE us;",
      "DELETE FROM sqlite_stat1 WHERE tbl = 'us';",
      "INSERT INTO sqlite_stat1 VALUES ('us', NULL, '1000000');",
      "INSERT INTO sqlite_stat1 VALUES ('us', 'us_stream', '1000000 1000000 1');",
      "INSERT INTO sqlite_stat1 VALUES ('us', 'us_shard', '1000000 1000000 1');",
      // Reloads the statistics.
      "ANALYZE sqlite_master;",
    };
    exec(queue, statements);
  }

  /** Runs the statements, in order, on the database's connection. */
  private static void exec(SQLiteQueue queue, String[] statements) throws Exception {
    queue
        .execute(
            new SQLiteJob<Void>() {
              @Override
              protected Void job(SQLiteConnection connection) throws Throwable {
                for (String statement : statements) connection.exec(statement);
                return null;
              }
            })
        .get();
  }

  /**
   * Jetty's request threads: `new Server(port)` gives a pool of 8 to 200
   * threads. -Dlauncher.minThreads, -Dlauncher.maxThreads and
   * -Dlauncher.reservedThreads (Jetty's threads kept spinning for the next
   * task; -1: its default) set it when given.
   */
  private static void sizeThreadPool(Server server) {
    if (!(server.getThreadPool() instanceof QueuedThreadPool)) return;
    QueuedThreadPool pool = (QueuedThreadPool) server.getThreadPool();
    Integer max = Integer.getInteger("launcher.maxThreads");
    Integer min = Integer.getInteger("launcher.minThreads");
    Integer reserved = Integer.getInteger("launcher.reservedThreads");
    if (max != null) {
      pool.setMinThreads(Math.min(pool.getMinThreads(), max));
      pool.setMaxThreads(max);
    }
    if (min != null) pool.setMinThreads(min);
    if (reserved != null) pool.setReservedThreads(reserved);
  }

  /** Calls `method` on `target` for one of the proxies above, throwing what the call threw. */
  private static Object forward(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static Object readField(Object target, Class<?> owner, String name) throws Exception {
    Field field = owner.getDeclaredField(name);
    field.setAccessible(true);
    return field.get(target);
  }

  /**
   * Ignores SIGINT. A terminal's Ctrl-C goes to the whole foreground process
   * group, this JVM included, but the local cloud stops in order and stops
   * this JVM last (closing stdin, then SIGTERM): work still finishing in the
   * cloud (a scheduled sweep, a stream batch) must not find DynamoDB Local
   * gone, fail, and end in a dead-letter queue that `--data-dir` keeps. The
   * parent's death still ends it (stdin), and SIGTERM and SIGKILL as ever.
   */
  private static void ignoreInterrupt() {
    sun.misc.Signal.handle(new sun.misc.Signal("INT"), sun.misc.SignalHandler.SIG_IGN);
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

  /** Fails unless DynamoDB Local's classes come from the jar of DYNAMODB_LOCAL_VERSION (Maven names it so). */
  private static void checkDynamoDbLocalVersion() {
    String jar =
        new java.io.File(ServerRunner.class.getProtectionDomain().getCodeSource().getLocation().getPath())
            .getName();
    String expected = "DynamoDBLocal-" + DYNAMODB_LOCAL_VERSION + ".jar";
    if (!jar.equals(expected)) {
      fail("written for " + expected + ", but DynamoDB Local comes from " + jar
          + ": update the launcher for that version, then DYNAMODB_LOCAL_VERSION");
    }
  }

  private static void fail(String message) {
    System.err.println("Launcher: " + message);
    System.exit(1);
  }
}
