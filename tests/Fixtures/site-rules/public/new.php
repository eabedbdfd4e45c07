<?php

declare(strict_types=1);
echo "new ", $_GET["name"] ?? "-";
