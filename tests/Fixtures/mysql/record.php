<?php

declare(strict_types=1);

/*
 * Records the conversation of tests/Unit/Db/Mysql/RecordedConversationTest with a real MariaDB into
 * conversation.json: for each step, what MysqlCodec sent and every byte the server answered. Run it again
 * after changing the steps: php tests/Fixtures/mysql/record.php
 */

use Kiln\Db\Mysql\Event\Done;
use Kiln\Db\Mysql\Event\Prepared;
use Kiln\Db\Mysql\Event\Ready;
use Kiln\Db\Mysql\Event\ServerError;
use Kiln\Db\Mysql\MysqlCodec;
use Kiln\Tests\Support\MariaDbServer;
use Kiln\Tests\Unit\Db\Mysql\RecordedConversation;

require \dirname(__DIR__, 3) . '/vendor/autoload.php';

$server = MariaDbServer::start();
$socket = stream_socket_client("tcp://127.0.0.1:{$server->port()}", $code, $message, 5.0);
if ($socket === false) {
    fwrite(STDERR, "cannot connect: $message\n");
    exit(1);
}
stream_set_timeout($socket, 5);
$codec = new MysqlCodec(MariaDbServer::USER, MariaDbServer::PASSWORD, MariaDbServer::DATABASE);
$steps = [];
$statement = 0;
foreach (RecordedConversation::steps() as $name => $step) {
    $server_bytes = '';
    match ($step['command']) {
        'connect' => null,
        'query' => $codec->query($step['sql'] ?? ''),
        'prepare' => $codec->prepare($step['sql'] ?? ''),
        'execute' => $codec->execute($statement, RecordedConversation::params()),
        'close' => $codec->closeStatement($statement),
        'quit' => $codec->quit(),
        default => throw new LogicException("unknown command {$step['command']}"),
    };
    $sent = $codec->output();
    fwrite($socket, $sent);
    // Read until the step's last event: Ready, a final Done or ServerError, Prepared; close and quit get no answer.
    $finished = \in_array($step['command'], ['close', 'quit'], true);
    while (!$finished) {
        $event = $codec->next();
        $more = $codec->output();
        if ($more !== '') {
            $sent .= $more;
            fwrite($socket, $more);
        }
        if ($event === null) {
            $chunk = fread($socket, 65536);
            if ($chunk === false || $chunk === '') {
                fwrite(STDERR, "the server stopped answering in step $name\n");
                exit(1);
            }
            $server_bytes .= $chunk;
            $codec->feed($chunk);
            continue;
        }
        if ($event instanceof Prepared) {
            $statement = $event->id;
        }
        $finished = $event instanceof Ready || $event instanceof Prepared || $event instanceof ServerError
            || ($event instanceof Done && !$event->moreResults);
    }
    $steps[$name] = ['client' => bin2hex($sent), 'server' => bin2hex($server_bytes)];
}
fclose($socket);
$server->stop();
file_put_contents(__DIR__ . '/conversation.json', json_encode($steps, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES) . "\n");
echo 'recorded ', \count($steps), " steps into tests/Fixtures/mysql/conversation.json\n";
