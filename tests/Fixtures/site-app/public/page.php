<?php

declare(strict_types=1);
echo "sapi=", PHP_SAPI, " script=", $_SERVER["SCRIPT_NAME"];
