// What DynamoDB Local 3.3.1 does to append an item's stream record, without
// the work whose result it throws away. Launcher.java (rewireStreamRecords)
// makes SQLiteDBAccessJob.insertUpdateStreamRecordIfActiveShardPresent call
// the method of that name below instead of its own body; everything it
// writes is what that body writes.
//
// In the package of DynamoDB Local's SQLite access, because the job's methods
// it calls are package-private there. Compiled with the launcher.

package software.amazon.dynamodb.services.local.shared.access.sqlite;

import com.almworks.sqlite4java.SQLiteException;
import java.io.IOException;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.Logger;
import software.amazon.awssdk.services.dynamodb.model.StreamViewType;
import software.amazon.dynamodb.services.local.shared.access.LocalDBUtils;
import software.amazon.dynamodb.services.local.shared.dataaccess.OperationType;
import software.amazon.dynamodb.services.local.shared.mapper.DynamoDbObjectMapper;
import software.amazon.dynamodb.services.local.shared.model.AttributeValue;

/**
 * DynamoDB Local's own body, for every item written to a table with a stream,
 * inside the write lock that a transaction holds on the whole database: the
 * table's latest stream and its open shard (two queries), then the stream's
 * whole description (a join over its shards, its JSON read back) for its view
 * type alone, then the record serialized twice, once into a debug line that
 * is built whether or not debug logging is on. Here a stream's view type is
 * read once per stream (a stream's id names one stream, whose view type never
 * changes: enabling a stream again opens a new one), and the debug line is
 * built only when it is logged. The two queries stay: a stream's rollover or
 * an UpdateTable changes what they answer.
 */
public final class StreamRecordWrites {
  private static final String INSERT_RECORD =
      "INSERT INTO \"us\" (\"StreamID\", \"ShardID\", \"SequenceNumber\", \"CreationDateTime\","
          + " \"StreamRecord\", \"OperationType\") VALUES (?,?,?,?,?,?)";

  /** The job's own mapper and logger, so that the record's bytes and the debug line are its own. */
  private static final DynamoDbObjectMapper MAPPER =
      (DynamoDbObjectMapper) jobStatic("MAPPER");

  private static final Logger LOGGER = (Logger) jobStatic("logger");

  private static final Map<String, StreamViewType> VIEW_TYPES = new ConcurrentHashMap<>();

  private StreamRecordWrites() {}

  /** SQLiteDBAccessJob.insertUpdateStreamRecordIfActiveShardPresent, the job first. */
  public static void insertUpdateStreamRecordIfActiveShardPresent(
      SQLiteDBAccessJob<?> job,
      String tableName,
      Map<String, AttributeValue> primaryKey,
      Map<String, AttributeValue> oldRecord,
      Map<String, AttributeValue> newRecord,
      Long sequenceNumber,
      Long creationDateTime,
      OperationType operationType)
      throws SQLiteException, IOException {
    String streamId = job.getTableLatestStreamId(tableName);
    if (streamId == null) return;
    List<String> shardIds = job.getStreamLatestActiveShardId(streamId);
    if (shardIds.isEmpty()) return;
    String shardId = shardIds.get(0);
    StreamViewType viewType = VIEW_TYPES.get(streamId);
    if (viewType == null) {
      viewType = job.getStreamDescription(streamId, null).streamViewType();
      VIEW_TYPES.put(streamId, viewType);
    }
    RecordInfo record =
        new RecordInfo(
            LocalDBUtils.getUUID(),
            "1.1",
            SQLiteDBAccessUtils.constructInternalStreamRecord(
                primaryKey, oldRecord, newRecord, viewType));
    if (LOGGER.isDebugEnabled()) {
      LOGGER.debug(
          String.format(
              "%s\n\t%s\n\t%s\n\t%s\n\t%s\n\t%s\n\t%s",
              INSERT_RECORD,
              streamId,
              shardId,
              sequenceNumber,
              creationDateTime,
              MAPPER.writeValueAsString(record),
              operationType.name()));
    }
    job.getPreparedStatement(INSERT_RECORD)
        .bind(1, streamId)
        .bind(2, shardId)
        .bind(3, sequenceNumber)
        .bind(4, creationDateTime)
        .bind(5, MAPPER.writeValueAsBytes(record))
        .bind(6, operationType.name())
        .step();
  }

  private static Object jobStatic(String name) {
    try {
      Field field = SQLiteDBAccessJob.class.getDeclaredField(name);
      field.setAccessible(true);
      return field.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("SQLiteDBAccessJob." + name + " is not there", e);
    }
  }
}
