<?php

declare(strict_types=1);
header('Location: /done');
echo json_encode(getallheaders());
